"""The bytes that separate words: Hadoop's WordCount tokenizer (java.util.StringTokenizer's
default delimiters). One definition for the pure-Python tokenizer (hedge.imkp.keys) and the
compiled counter (hedge.imkp.wordcount)."""

DELIMITERS = b" \t\n\r\f"
