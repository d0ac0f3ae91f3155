"""Research studies: simulations that measure hedge's rules rather than run them.

- :mod:`hedge.research.study`: the detection-accuracy study (``hedge detect study``);
- :mod:`hedge.research.estimation_error`: runtime estimators' errors on the study's tasks;
- :mod:`hedge.research.plots`: the study's box plots.

They use the detectors and estimators (``hedge.detect``, ``hedge.estimate``); nothing in the
control plane or the simulator imports them.
"""
