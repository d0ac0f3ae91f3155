"""Shared fixtures: where the shared real traces live; numpy's CPU features held to AVX2."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# numpy picks its float64 log and exp loops by CPU. With AVX-512 (X86_V4) they differ in
# the last bit from the ones numpy uses without it and from libm's, which numba's kernels
# call, so the golden digests (test_sim_golden) and the kernels' bit-for-bit tests held only
# on CPUs without AVX-512 (on an AMD EPYC with it, 54 failed). Tests therefore run numpy on
# its AVX2 loops everywhere; results outside the tests may differ in the last bits by CPU.
# This must be set before numpy's first import, which is why it sits here.
os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
if "numpy" in sys.modules:  # a plugin imported it first: the setting would not take
    raise RuntimeError("tests/conftest.py: numpy was imported before NPY_DISABLE_CPU_FEATURES "
                       "could be set; run pytest without plugins that import numpy")

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data beside the repository; skips (saying what is missing) when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared traces at {SHARED_DATA} (not found)")
    return SHARED_DATA


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or a skip naming it."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"needs {path} (not found)")
    return path
