"""hedge.traces: trace readers, synthetic workloads, straggler statistics.

- ``load(path)``: any supported task trace -> ``Workload`` (format detected from the file)
- ``read_attempts(path)``: attempt-level traces (Rumen JSON, ``.jhist``, Google 2011
  ``task_events``) -> pyarrow Table (see ``hedge.traces.attempts``)
- ``hedge.traces.synthetic``: generated workloads and the Google-2011-fitted default
"""

from hedge.lazy import lazy_exports

# each name -> the module it comes from, imported when first read
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "ATTEMPT_SCHEMA": "hedge.traces.attempts",
    "detect": "hedge.traces.formats",
    "load": "hedge.traces.formats",
    "read_attempts": "hedge.traces.formats",
    "Workload": "hedge.traces.workload",
})
