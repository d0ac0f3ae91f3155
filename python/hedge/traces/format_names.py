"""The names of the trace formats hedge reads, apart from their readers: a command's
``--format`` choices and help need them without importing pyarrow and every reader
(``hedge.traces.formats`` maps each to its reader and checks it names these)."""

# formats that keep every attempt of a task (killed and speculative ones too)
ATTEMPT_FORMAT_NAMES = ("rumen", "jhist", "mrv1_history", "google_task_events", "spark_eventlog")
FORMAT_NAMES = (*ATTEMPT_FORMAT_NAMES, "alibaba2017_batch_task", "swim", "tr")
