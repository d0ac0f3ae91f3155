"""``hedge reproduce``: each published result hedge implements, re-run as one command.

One module per seed (``heartbeat``, ``window``, ``chronos``, ``replication``, ``thesis``),
each exposing ``reproduce(out: Path, quick: bool = False) -> Reproduction``; the record and
its renderers live in :mod:`hedge.reproduce.table`, the command in :mod:`hedge.reproduce.cli`.
"""
