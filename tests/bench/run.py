#!/usr/bin/env python3
"""Run hedge's benchmarks: every tests/bench/bench_*.py, or those named (e.g. `run.py sim`).

Each benchmark prints its figures as ratios against a baseline measured in the same run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    failed = []
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        if subprocess.run([sys.executable, str(script)]).returncode != 0:
            failed.append(script.stem)
    if failed:
        print(f"\nbenchmarks failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
