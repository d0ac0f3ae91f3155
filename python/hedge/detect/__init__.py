"""Straggler detectors: score, rate, hadoop, static, adaptive, fresh-score, fresh-rate.

Array rules live in :mod:`hedge.detect.rules`, snapshot-level detectors in
:mod:`hedge.detect.detectors`. Input checks moved to :mod:`hedge.model.validate` (re-exported
here) and the detection-accuracy study to :mod:`hedge.research.study`.
"""

from hedge.detect.detectors import DETECTORS, adaptive_factor, detect
from hedge.detect.rules import adaptive_threshold
from hedge.model.validate import ReportHistory, validate_snapshot

__all__ = [
    "DETECTORS",
    "ReportHistory",
    "adaptive_factor",
    "adaptive_threshold",
    "detect",
    "validate_snapshot",
]
