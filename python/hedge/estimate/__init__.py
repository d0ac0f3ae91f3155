"""hedge.estimate"""
