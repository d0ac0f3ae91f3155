"""hedge.imkp"""
