"""hedge.report"""
