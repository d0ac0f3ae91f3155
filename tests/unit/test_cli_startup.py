"""Start-up stays light: what `hedge --help` and `hedge imkp build` import (no timed test).

Each case runs the CLI in a fresh interpreter and lists the heavy modules left in
``sys.modules``: `hedge --help` and every command's `--help` need none of numpy, pyarrow,
matplotlib or numba (imkp's commands, tuned for the build, load numpy and pyarrow), and a
words build needs neither scipy.linalg (numba's BLAS probe) nor tqdm (no progress
bar asked for), and numba only when the word count's ahead-of-time module is not built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hedge.imkp import wordtable

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pyarrow", "matplotlib", "numba", "scipy.linalg", "tqdm", "pandas")

PROBE = """
import json, sys
from hedge.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def loaded_after(*args: str) -> tuple[list[str], str]:
    """(heavy modules imported by ``hedge ARGS``, its stdout)."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
                          capture_output=True, text=True, timeout=300,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


def test_help_imports_no_heavy_module() -> None:
    loaded, out = loaded_after("--help")
    assert "imkp" in out  # the help really ran
    assert loaded == []


def test_imkp_build_imports_neither_scipy_linalg_nor_tqdm(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("to be or not to be\n")
    loaded, out = loaded_after("imkp", "build", str(tmp_path / "in.txt"), "-r", "2",
                               "-o", str(tmp_path / "m.imkp"), "--no-progress")
    assert "wrote" in out and (tmp_path / "m.imkp").exists()
    # the compiled word count ran: through numba's jit, or through the ahead-of-time module
    # built for this source (hedge.imkp.wordtable), which imports without numba
    assert ("numba" in loaded) == (not wordtable.compiled_path().is_file())
    assert "scipy.linalg" not in loaded and "tqdm" not in loaded


# every command's help, as a user asks it: what it shows is text, so it needs none of the
# heavy modules its work does (`hedge plan chronos --help` took 1.6-2.1 s of numba and
# scipy before, `hedge simulate --help` 1.2 s); imkp's own start-up is tuned for its build
# (numpy with one BLAS thread, pyarrow), so there only the others are held out
HELP_PATHS = [["simulate"], ["traces"], ["traces", "stats"], ["traces", "model"], ["detect"],
              ["detect", "study"], ["detect", "estimation-error"], ["plan"],
              ["plan", "chronos"], ["plan", "replicate"], ["nodes"], ["nodes", "rank"],
              ["nodes", "predict"], ["nodes", "train"], ["nodes", "watch"], ["serve"],
              ["reproduce"], ["imkp"], ["imkp", "build"], ["imkp", "show"],
              ["imkp", "lookup"]]


@pytest.mark.parametrize("path", HELP_PATHS, ids=" ".join)
def test_every_commands_help_imports_no_heavy_module(path: list[str]) -> None:
    loaded, out = loaded_after(*path, "--help")
    assert f"Usage: hedge {' '.join(path)}" in out  # the help really ran
    allowed = {"numpy", "pyarrow"} if path[0] == "imkp" else set()
    assert set(loaded) - allowed == set(), loaded
