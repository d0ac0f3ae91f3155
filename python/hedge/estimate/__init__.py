"""Runtime estimators: legacy (Hadoop), rate (LATE), jvm (Chronos), fresh (hedge).

Each ``*_ect(attempts, now)`` returns estimated completion times in absolute seconds, one
per attempt, NaN where no estimate is possible. See :mod:`hedge.estimate.runtime`.
"""

from hedge.estimate.runtime import (
    ESTIMATORS,
    check_estimator,
    estimate_ect,
    fresh_ect,
    fresh_progress,
    jvm_ect,
    jvm_startup,
    legacy_ect,
    rate_ect,
)

__all__ = [
    "ESTIMATORS",
    "check_estimator",
    "estimate_ect",
    "fresh_ect",
    "fresh_progress",
    "jvm_ect",
    "jvm_startup",
    "legacy_ect",
    "rate_ect",
]
