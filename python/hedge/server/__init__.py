"""hedge.server"""
