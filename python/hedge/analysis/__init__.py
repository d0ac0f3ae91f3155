"""hedge.analysis"""
