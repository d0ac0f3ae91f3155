"""The detection study's default grid and detector names, apart from the study: ``hedge
detect``'s options and help show them without importing numpy and the detectors
(``hedge.research.study`` takes them from here and checks its detectors carry these names)."""

TASKS = (10, 50)  # tasks per job
D_AVG = (10.0, 20.0, 50.0, 100.0)  # mean task duration (s)
DETECTOR_NAMES = ("score", "rate", "fresh-score", "fresh-rate", "hadoop", "static", "adaptive")
DEFAULT_DETECTORS = ("score", "rate", "fresh-score", "fresh-rate")
