"""Straggler detectors: score, rate, hadoop, static, adaptive, fresh-score, fresh-rate.

Array rules live in :mod:`hedge.detect.rules`, snapshot-level detectors in
:mod:`hedge.detect.detectors`. Input checks moved to :mod:`hedge.model.validate` (re-exported
here) and the detection-accuracy study to :mod:`hedge.research.study`.
"""

from hedge.lazy import lazy_exports

# each name -> the module it comes from, imported when first read
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "DETECTORS": "hedge.detect.detectors",
    "adaptive_factor": "hedge.detect.detectors",
    "detect": "hedge.detect.detectors",
    "adaptive_threshold": "hedge.detect.rules",
    "ReportHistory": "hedge.model.validate",
    "validate_snapshot": "hedge.model.validate",
})
