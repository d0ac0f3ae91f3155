"""hedge.nodes"""
