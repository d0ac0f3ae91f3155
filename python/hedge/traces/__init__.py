"""hedge.traces"""
