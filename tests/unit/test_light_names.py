"""The names a command's --help shows come from light modules (hedge.traces.format_names,
hedge.research.study_grid); the heavy tables they stand for carry exactly those names."""

from __future__ import annotations

from hedge.research.study import STUDY_DETECTORS
from hedge.research.study_grid import DETECTOR_NAMES
from hedge.traces.format_names import ATTEMPT_FORMAT_NAMES, FORMAT_NAMES
from hedge.traces.formats import ATTEMPT_FORMATS, FORMATS


def test_the_readers_are_the_formats_named_in_format_names() -> None:
    assert tuple(ATTEMPT_FORMATS) == ATTEMPT_FORMAT_NAMES
    assert FORMATS == FORMAT_NAMES and set(ATTEMPT_FORMAT_NAMES) < set(FORMAT_NAMES)


def test_the_study_detectors_are_the_ones_study_grid_names() -> None:
    assert tuple(STUDY_DETECTORS) == DETECTOR_NAMES
