"""Shared fixtures: where the shared real traces live."""

from __future__ import annotations

from pathlib import Path

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
