"""hedge.traces: trace readers, synthetic workloads, straggler statistics.

- ``load(path)``: any supported task trace -> ``Workload`` (format detected from the file)
- ``read_attempts(path)``: attempt-level traces (Rumen JSON, ``.jhist``, Google 2011
  ``task_events``) -> pyarrow Table (see ``hedge.traces.attempts``)
- ``hedge.traces.synthetic``: generated workloads and the Google-2011-fitted default
"""

from hedge.traces.attempts import ATTEMPT_SCHEMA
from hedge.traces.formats import detect, load, read_attempts
from hedge.traces.workload import Workload

__all__ = ["ATTEMPT_SCHEMA", "Workload", "detect", "load", "read_attempts"]
