"""hedge.sim"""
