#!/usr/bin/env python3
"""hedge's main job on its bundled default (what `make demo` runs).

1. The first figure, in well under a minute of CPU: none, hadoop, late and adaptive on the
   first 60 jobs of the embedded Google-2011-like default workload in the trace-driven
   simulator (README's first command): its table and OUT/first/report.html.
2. The Java side end to end: WordCount in Hadoop's LocalJobRunner with the shim jar's
   partitioner, on Hadoop 3.4.1 (the classpath scripts/build-shim.sh writes).
3. A real trace, when ../shared/data is present (about 45 s of CPU): the Google 2011
   sample (part 0) on its own machines under the calibrated trace model, with hadoop's
   speculation, window, hedge-auto and the clairvoyant oracle against none: the table, the
   standings under it, and OUT/google2011/report.html, whose first plot shows at a glance
   which policy to turn on (saving against waste, the frontier marked, the oracle's line).
4. With --full, the long comparisons (about 15-20 minutes of CPU): every policy on the
   default's first 300 jobs (deadlines 1.5 x each job's no-straggler time), and the
   scan-gated policies on the same Google 2011 sample, its machines 2x heterogeneous:
   tables, OUT/*/report.html and OUT/*.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hedge import javaenv

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def run(command: list[str]) -> None:
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


# The first figure's run: README's first command (about 35 s of CPU on this 2-core machine,
# adaptive most of it); --full runs the long comparisons.
FIRST_JOBS = 60
FIRST_POLICIES = "none,hadoop,late,adaptive"
DEFAULT_JOBS = 300
# the scan-gated ones (quick), hedge's cost-aware policy, and the clairvoyant reference line
TRACE_POLICIES = "none,hadoop,late,mantri,spark,static,score,rate,hedge-auto,oracle"
# the real-trace section every demo runs: Hadoop's own speculation, hedge's two best policies
# on real traces, and the clairvoyant reference (docs/trace-model.md)
REAL_TRACE_POLICIES = "none,hadoop,window,hedge-auto,oracle"
GOOGLE_2011 = SHARED / "google_clusterdata_2011_2" / "task_events" / "part-00000-of-00500.csv.gz"


def hedge() -> str:
    return str(Path(sys.executable).with_name("hedge"))


def first_figure(out: Path, began: float) -> None:
    run([hedge(), "simulate", "--synthetic", f"default:jobs={FIRST_JOBS}",
         "--policy", FIRST_POLICIES, "--out", str(out / "first")])
    print(f"figures: {out / 'first' / 'report.html'} (first written after the first run, "
          f"rewritten after each; complete {time.monotonic() - began:.0f} s after the demo "
          "started)", flush=True)


def real_trace(out: Path) -> None:
    """The Google 2011 sample on its own machines (one node per machine it names), under
    the calibrated trace model, hedge simulate's default."""
    if not GOOGLE_2011.exists():
        print(f"(no real trace at {GOOGLE_2011}: the real-trace section needs ../shared/data "
              "beside the repository)", flush=True)
        return
    run([hedge(), "simulate", "--trace", str(GOOGLE_2011), "--policy", REAL_TRACE_POLICIES,
         "--workers", "2", "--out", str(out / "google2011"),
         "--json", str(out / "google2011.json")])
    print(f"which policy to turn on: {out / 'google2011' / 'which_policy.png'} (in "
          f"{out / 'google2011' / 'report.html'})", flush=True)


def policy_comparison(out: Path) -> None:
    common = ["--deadline-factor", "1.5", "--workers", "2", "--quiet"]
    run([hedge(), "simulate", "--synthetic", f"default:jobs={DEFAULT_JOBS}", "--policy", "all",
         *common, "--out", str(out / "default"), "--json", str(out / "default.json")])
    if GOOGLE_2011.exists():  # the cluster comes from the trace: one node per machine it names
        run([hedge(), "simulate", "--trace", str(GOOGLE_2011), "--policy", TRACE_POLICIES,
             *common, "--cluster", "heterogeneity=2.0", "--out", str(out / "google2011-full"),
             "--json", str(out / "google2011-full.json")])
    else:
        print(f"(no real trace at {GOOGLE_2011}: the comparison ran on the embedded default "
              "only)")


def wordcount_demo(version: str = "3.4.1", reducers: int = 3) -> None:
    with tempfile.TemporaryDirectory(prefix="hedge-demo-") as tmp:
        folder = Path(tmp)
        text = SHARED / "text" / "tinyshakespeare.txt"
        source = text.read_text(encoding="utf-8") if text.exists() else "to be or not to be\n" * 100
        (folder / "in").mkdir()
        (folder / "in" / "input.txt").write_text(source, encoding="utf-8")
        args = ["-D", "mapreduce.framework.name=local", "-D", "fs.defaultFS=file:///",
                "-D", f"hadoop.tmp.dir={folder / 'tmp'}", str(folder / "in"), str(folder / "out"),
                str(reducers), "org.hedge.demo.FirstCharPartitioner"]
        print(f"$ java org.hedge.tools.WordCount ... (Hadoop {version}, LocalJobRunner)", flush=True)
        result = javaenv.run_java("org.hedge.tools.WordCount", args, version)
        if result.returncode != 0:
            sys.exit(f"demo: WordCount failed:\n{result.stderr[-3000:]}")
        for r in range(reducers):
            counts = Counter()
            for line in (folder / "out" / f"part-r-{r:05d}").read_text(encoding="utf-8").splitlines():
                word, n = line.rsplit("\t", 1)
                counts[word] = int(n)
            print(f"reducer {r}: {len(counts):6d} distinct words, {sum(counts.values()):7d} records; "
                  f"top: {', '.join(w for w, _ in counts.most_common(3))}")


def main() -> int:
    began = time.monotonic()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "out" / "demo")
    parser.add_argument("--full", action="store_true",
                        help="Also run the long comparisons (every policy on 300 default jobs, "
                             "ten on the Google 2011 sample): about 15-20 minutes of CPU.")
    args = parser.parse_args()
    first_figure(args.out, began)
    wordcount_demo()
    real_trace(args.out)
    if args.full:
        policy_comparison(args.out)
    else:
        print("the long comparisons (every policy on 300 default jobs, and ten on the Google "
              "2011 sample): scripts/demo.py --full", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
