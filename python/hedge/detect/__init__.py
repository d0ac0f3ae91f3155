"""hedge.detect"""
