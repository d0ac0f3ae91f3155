"""hedge: straggler mitigation for Hadoop YARN MapReduce.

The control plane (policies, estimators, detectors, analyses), the trace-driven simulator
that runs the same policies, and the tools operators use around them.
"""

__version__ = "0.1.0"
