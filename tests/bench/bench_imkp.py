"""Benchmark: ImKP balance, partitioner cost, build throughput and start-up (issues 8 and 21).

Run: ``.venv/bin/python tests/bench/bench_imkp.py [--quick] [--skip-java] [--only PART]``.
Every figure is printed next to a baseline measured in the same run (CPU time).

1. Skew table: Zipf text (exponents 0.4-1.4, 2 M tokens over a 50 k-word vocabulary) and
   Tiny Shakespeare, R in {5, 10, 100}: coefficient of variation and max/LB of reducer input
   for Hadoop's HashPartitioner (``(Text.hashCode() & MAX) % R``, emulated exactly),
   groups-only ImKP, ImKP with heavy keys, and TotalOrderPartitioner with split points from
   Hadoop's own InputSampler (RandomSampler(0.1, 10000, 10), run in Java on a one-key-per-line
   copy of the input); TotalOrder routing is emulated (``bisect_right`` on unsigned bytes, as
   TotalOrderPartitioner's binary search) and checked once against a real LocalJobRunner
   WordCount with TotalOrderPartitioner. Scored on the data each mapping was built from, ImKP
   is 1.000 nearly by construction, so the table also scores it held out (target <= 1.01 x
   LB): built on one sample and scored on another draw of the same distribution (Zipf: a
   second draw with another seed; Shakespeare: built on a random half of its lines, scored
   on the other half), next to the noise floor: the expected max/LB of a mapping that is
   perfectly balanced in expectation, on a fresh draw of the same size (reducer loads
   multinomial with the mapping's shares, Monte Carlo) - what sampling alone costs; ``expect``
   = 1 + sqrt(2) (floor - 1), the same noise once more in the draw the mapping was built
   from; and for Zipf the ``oracle``: a mapping built on the distribution itself (expected
   counts), scored on the same draw. Issue 21, session 29: 17/21 held out; the 4 misses are
   sampling noise, not the mapping. Over 12 build/score pairs each (2 build draws x 6 score
   draws; Shakespeare: 6 random halvings, both ways), mean held-out (range) vs expect:
   zipf0.4 R=100 1.0244 (1.0219-1.0328) vs 1.0251, zipf0.6 R=100 1.0257 (1.0177-1.0312) vs
   1.0251, shakespeare R=10 1.0222 (1.0114-1.0398) vs 1.0216, shakespeare R=5 1.0120
   (1.0030-1.0225) vs 1.0111; the 17 others' means are all <= 1.0045. Out of reach by
   construction: at R=100 a reducer gets 20,000 of 2 M tokens, binomial noise 0.70%, and the
   largest of 100 is ~2.5 sigma above the mean: the floor is 1.0178 and the oracle scores
   1.0175 and 1.0158, so no mapping fixed before the draw gets 1.01 (Shakespeare R=10:
   floor 1.0152; a halving's line-level noise matches the multinomial floor: a half of the
   whole text scored under the whole's mapping is 1.0111 on average over 40 halvings, x
   sqrt(2) for a fresh draw = 1.0157). Shakespeare R=5 is the one whose floor (1.0078) is
   under 1.01, but a mapping built from half the lines carries that noise twice (1.011
   expected, 1.0120 measured). Tried and not kept: shrinking group totals towards their
   mean by the share of their variance that Poisson noise explains (James-Stein) - zipf0.4
   and 0.6 R=100 1.0244 -> 1.0262, 1.0257 -> 1.0275; Shakespeare R=5 1.0120 -> 1.0104, R=10
   1.0222 -> 1.0192, within the range over halvings; equal sizes for every group: 1.07-1.17;
   room for keys the sample lacked (Good-Turing: n1 records spread over the groups, the
   counted ones scaled by (N - n1) / N), paired over the same 12 pairs: Shakespeare R=10
   -0.0044 +- 0.0030, R=5 -0.0013 +- 0.0022, but zipf1.2 R=5 +0.0029 +- 0.0006 (a
   fresh draw's tail keys lose about what the unseen ones gain, so the groups do not grow
   against the heavy keys); only moving mass between groups (each key seen once worth
   2 n2 / n1): R=10 -0.0042 +- 0.0035, R=5 +0.0012 +- 0.0026, zipf1.2 R=5 -0.0004 +- 0.0002.
   None significant where it matters or bringing a case under 1.01: not kept.
   Reaching 1.01 needs more text to build from and to score: ~6 M tokens a draw at R=100
   for the oracle alone (sigma <= 0.4%).
2. Partitioner cost: Java micro-benchmark (``org.hedge.imkp.PartitionerBench``), 10 M Text
   keys drawn from Zipf(1.0), warm JIT, median of 11 runs; ratio ImKP / HashPartitioner
   (target <= 1.1). Issue 21's step (Murmur3 blocks and tail, and the heavy-key compare, as
   int loads through ByteBuffer views): 6 JVM runs of each side, alternating, Java 17, load
   6-8 on 2 cores: ratio 1.177 median (1.121-1.204) before, 1.028 (0.990-1.077) after; per-run
   interleaved ratios 1.173 -> 1.040. Java 25: 1.154, 1.214 before; 0.859, 0.993 after.
3. Build throughput, one thread, MB per CPU second (target >= 100), on whitespace text
   (Tiny Shakespeare repeated to ~32 MB) and on a ~32 MB input of 1 M distinct keys (each
   once, plus 2.5 M uniform draws): hedge's builder in-process next to ``wc -w`` and a naive
   ``collections.Counter(data.split())`` on the same bytes (timed in a child process:
   ``counter_cpu``); then ``hedge imkp build`` as a
   command (start-up included, CPU time of the child) against the in-process figure
   (target <= 1.5x), and the command's fixed cost (a two-word input) next to what importing
   everything but numba costs: with the 31 MB file's in-process time ``t``, that import
   alone bounds the ratio from below by ``(import + t) / t`` (about 3 on the machine of
   issue 21: 0.29 s of imports for 0.15 s of counting, so 1.5x is out of reach while
   numpy, pyarrow and click are imported at all). The ``jit`` column runs the command with
   ``HEDGE_IMKP_JIT=1`` (numba imported, its cached kernels loaded), the path every build
   took before the ahead-of-time module (``hedge.imkp.wordtable``). Issue 21, session 29,
   load 3.5-4.5 on 2 cores: the tree before d59eabf vs after c3d7bfc, ``python -m hedge.cli
   imkp build`` interleaved, 8 runs each, CPU s median (range): two words 0.899
   (0.756-1.018) -> 0.296 (0.227-0.343), pair ratio 0.32 (0.24-0.38); the 31 MB file 1.020
   (0.913-1.258) -> 0.463 (0.390-0.550), 0.45 (0.35-0.50), against 0.17-0.18 in-process:
   CLI/in-proc about 5.8 -> 2.6. This bench in one run: 31 MB 2.75 (jit 5.67), 1 M distinct
   keys 2.40 (jit 4.77); fixed cost 0.243 s (jit 0.760), importing numpy (one BLAS thread),
   pyarrow and click alone 0.197 s, so >= 2.31 while the command is Python on them: 1.5x
   needs all start-up within 0.075 s, and numpy's import alone is 0.08-0.12 s.
   2026-11-29, ``--only build`` on a 2-core AMD EPYC with AVX-512 (load 0.7; ``wc -w`` 250
   MB/CPU-s on the 1 M-key input, 159 on issue 21's machine): Shakespeare 266.8 MB/CPU-s
   (1.35x wc), 1 M distinct keys 160.3 (0.64x wc; 84 there), so >= 100 holds here on both;
   CLI/in-proc 2.73 and 2.32, fixed cost 0.165 s against 0.124 s for importing numpy,
   pyarrow and click alone.
4. Start-up: ``hedge --help`` and a command's help in each area (CPU and wall time of the
   child, target <= 0.3 s) next to ``python -c pass``.
"""

from __future__ import annotations

import argparse
import bisect
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO))

from hedge import javaenv  # noqa: E402
from hedge.imkp.build import BuildSettings, build, mapping_from_counts  # noqa: E402
from hedge.imkp.count import KeyCounts, distinct_counts  # noqa: E402
from hedge.imkp.hashing import hash_partition_array, murmur3_32_array  # noqa: E402
from hedge.imkp.keys import tokenize  # noqa: E402
from hedge.imkp.mapfile import write_mapping  # noqa: E402

SHAKESPEARE = REPO.parent / "shared" / "data" / "text" / "tinyshakespeare.txt"
EXPONENTS = (0.4, 0.6, 0.8, 1.0, 1.2, 1.4)
REDUCERS = (5, 10, 100)
HADOOP = "3.4.1"


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Distinct random words (lower-case letters, some accented), lengths 2-10."""
    letters = list("abcdefghijklmnopqrstuvwxyz") * 3 + list("éüøß")
    words: set[str] = set()
    while len(words) < size:
        n = int(rng.integers(2, 11))
        words.add("".join(rng.choice(letters, size=n)))
    return sorted(words)


def vocabulary_counts(drawn: np.ndarray, words: list[str]) -> tuple[pa.Array, np.ndarray]:
    """(keys, counts) of the drawn word indices."""
    counted = np.bincount(drawn, minlength=len(words))
    seen = np.flatnonzero(counted)
    return (pa.array([words[k].encode() for k in seen], type=pa.binary()),
            counted[seen].astype(np.int64))


def zipf_tokens(exponent: float, tokens: int, words: list[str], seed: int,
                draw_seed: int | None = None) -> np.ndarray:
    """Word indices drawn from Zipf(exponent); ``seed`` fixes which word has which rank (the
    distribution), ``draw_seed`` (default: the same stream) the draw."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(words) + 1) ** exponent
    order = rng.permutation(len(words))  # rank -> word, so ranks are not alphabetical
    draw = rng if draw_seed is None else np.random.default_rng(draw_seed)
    return order[draw.choice(len(words), size=tokens, p=p / p.sum())]


def zipf_truth(exponent: float, words: list[str], seed: int) -> tuple[pa.Array, np.ndarray]:
    """(keys, expected counts) of the distribution ``zipf_tokens(exponent, ..., seed)`` draws
    from, as integers summing to about 10**12 (a mapping's balance does not depend on scale)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(words) + 1) ** exponent
    order = rng.permutation(len(words))  # as zipf_tokens: rank -> word
    expected = np.zeros(len(words))
    expected[order] = p / p.sum()
    counts = np.maximum(1, np.rint(expected * 1e12)).astype(np.int64)
    return pa.array([w.encode() for w in words], type=pa.binary()), counts


def stats(loads: np.ndarray, lower_bound: int) -> tuple[float, float]:
    return float(loads.std() / loads.mean()), float(loads.max() / lower_bound)


def lower_bound(counts: np.ndarray, r: int) -> int:
    return max(-(-int(counts.sum()) // r), int(counts.max()))


def held_out_score(mapping, keys: pa.Array, counts: np.ndarray) -> float:  # noqa: ANN001
    """max/LB of ``mapping`` on other data (keys it never saw go to their group)."""
    loads = np.bincount(mapping.reducers_of(keys), weights=counts, minlength=mapping.reducers)
    return float(loads.max() / lower_bound(counts, mapping.reducers))


def noise_floor(mapping, counts: np.ndarray, draws: int = 200) -> float:  # noqa: ANN001
    """Expected max/LB on a fresh draw of ``counts.sum()`` records of a mapping whose reducer
    shares are its predicted loads' (Monte Carlo): the imbalance sampling alone causes."""
    shares = mapping.loads / mapping.loads.sum()
    rng = np.random.default_rng(1)
    total = int(counts.sum())
    lb = max(-(-total // mapping.reducers), int(counts.max()))
    return float(np.mean(rng.multinomial(total, shares, size=draws).max(axis=1)) / lb)


def totalorder_splits(words_file: Path, work: Path) -> dict[int, list[bytes] | str]:
    """Split points per R from Hadoop's InputSampler (Java), or the error it raised."""
    result = javaenv.run_java("org.hedge.imkp.TotalOrderSplits",
                              [str(words_file), str(work), *map(str, REDUCERS)], HADOOP,
                              extra_classpath=(javaenv.shim_test_classes(),), timeout=600)
    splits: dict[int, list[bytes] | str] = {r: [] for r in REDUCERS}
    for line in result.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0].isdigit():
            r = int(parts[0])
            if parts[1] == "ERROR":
                splits[r] = parts[2] if len(parts) > 2 else "error"
            elif isinstance(splits[r], list):
                splits[r].append(bytes.fromhex(parts[1]))
    if result.returncode != 0:
        return {r: f"InputSampler failed: {result.stderr[-300:]}" for r in REDUCERS}
    return splits


def totalorder_loads(keys: list[bytes], counts: np.ndarray, splits: list[bytes], r: int) -> np.ndarray:
    """TotalOrderPartitioner: partition = number of split points <= key (unsigned bytes)."""
    parts = np.array([bisect.bisect_right(splits, k) for k in keys])
    return np.bincount(parts, weights=counts, minlength=r)


def build_from(keys: pa.Array, counts: np.ndarray, r: int, heavy: int):  # noqa: ANN201
    settings = BuildSettings(reducers=r, heavy_keys=heavy)
    totals = np.bincount(murmur3_32_array(keys).astype(np.int64) % settings.groups,
                         weights=counts, minlength=settings.groups).astype(np.int64)
    return mapping_from_counts(KeyCounts(totals, keys, counts, True), settings)


def skew_table(inputs: dict[str, tuple[pa.Array, np.ndarray, Path | None]],
               held_out: dict[str, tuple[pa.Array, np.ndarray, pa.Array, np.ndarray]],
               truth: dict[str, tuple[pa.Array, np.ndarray]], java: bool, work: Path) -> None:
    print("\n## 1. Skew: CV and max/LB of reducer input (LB = max(ceil(total/R), heaviest key))")
    print(f"{'input':<12} {'R':>4}  {'hash CV':>8} {'max/LB':>7}  {'groups CV':>9} {'max/LB':>7}"
          f"  {'imkp CV':>8} {'max/LB':>7}  {'totalorder CV':>13} {'max/LB':>7}"
          f"  {'held-out':>8} {'floor':>6} {'/floor':>6} {'expect':>6} {'oracle':>6}")
    met, cases, held_met, unreachable = 0, 0, 0, []
    for name, (keys, counts, words_file) in inputs.items():
        key_list = keys.to_pylist()
        splits = totalorder_splits(words_file, work / name) if java and words_file else {}
        total, heaviest = int(counts.sum()), int(counts.max())
        for r in REDUCERS:
            lb = max(-(-total // r), heaviest)
            hashed = np.bincount(hash_partition_array(keys, r), weights=counts, minlength=r)
            row = [stats(hashed, lb)]
            for heavy in (0, 1024):
                row.append(stats(build_from(keys, counts, r, heavy).loads, lb))
            cases += 1
            met += row[-1][1] <= 1.01
            split = splits.get(r)
            if isinstance(split, list) and len(split) == r - 1:
                to = "{:>13.4f} {:>7.3f}".format(*stats(totalorder_loads(key_list, counts, split, r), lb))
            else:
                to = f"{'n/a':>13} {'':>7}" if not isinstance(split, str) else f"{'failed':>13} {'':>7}"
            train_keys, train_counts, test_keys, test_counts = held_out[name]
            built = build_from(train_keys, train_counts, r, 1024)
            score = held_out_score(built, test_keys, test_counts)
            floor = noise_floor(built, test_counts)
            held_met += score <= 1.01
            expect = 1 + np.sqrt(2) * max(0.0, floor - 1)  # build and test draws both noisy
            oracle = "n/a"
            if name in truth:  # the mapping built on the distribution itself, same test draw
                oracle = f"{held_out_score(build_from(*truth[name], r, 1024), test_keys, test_counts):.4f}"
            if floor > 1.01 or (name in truth and float(oracle) > 1.01):
                unreachable.append(f"{name} R={r}")
            print(f"{name:<12} {r:>4}  {row[0][0]:>8.4f} {row[0][1]:>7.3f}  {row[1][0]:>9.4f} "
                  f"{row[1][1]:>7.3f}  {row[2][0]:>8.4f} {row[2][1]:>7.4f}  {to}"
                  f"  {score:>8.4f} {floor:>6.4f} {score / floor:>6.3f} {expect:>6.4f} {oracle:>6}")
    print(f"ImKP with heavy keys within 1.01 x LB: {met}/{cases} cases on the data it was built "
          f"from, {held_met}/{cases} held out (held-out: built on one sample, scored on another; "
          "floor: the expected max/LB of a mapping balanced in expectation on a fresh draw of "
          "that size, so /floor near 1 means sampling noise, not the mapping, is the gap; "
          "expect: 1 + sqrt(2) (floor - 1), the same noise in the draw built from as well; "
          "oracle: a mapping built on the distribution itself, scored on the same draw)")
    print(f"out of reach of 1.01 by construction (floor or oracle above it, so no mapping "
          f"fixed before the draw gets there): {', '.join(unreachable) or 'none'}")


def verify_totalorder(words_file: Path, keys: pa.Array, counts: np.ndarray, work: Path) -> None:
    """One real LocalJobRunner WordCount with TotalOrderPartitioner vs the emulation."""
    from tests.integration.hadoop_job import run_wordcount

    r = 10
    splits = totalorder_splits(words_file, work / "verify")[r]
    if not isinstance(splits, list):
        print(f"TotalOrder check skipped: {splits}")
        return
    folder = work / "verify-in"
    folder.mkdir()
    shutil.copy(words_file, folder / "words.txt")
    outputs = run_wordcount(HADOOP, folder, work / "verify-out", r,
                            "org.apache.hadoop.mapreduce.lib.partition.TotalOrderPartitioner",
                            ["-D", f"mapreduce.totalorderpartitioner.path={work / 'verify' / f'splits-{r}'}"])
    real = [sum(outputs[i].values()) for i in range(r)]
    emulated = totalorder_loads(keys.to_pylist(), counts, splits, r).astype(int).tolist()
    print(f"TotalOrderPartitioner real LocalJobRunner run (zipf1.0, R={r}, Hadoop {HADOOP}): "
          f"reducer inputs {'equal' if real == emulated else 'DIFFER FROM'} the emulation")


def partitioner_cost(keys: pa.Array, counts: np.ndarray, work: Path, records: int,
                     runs: int) -> None:
    print(f"\n## 2. Partitioner cost per record (Java, {records / 1e6:.0f} M Text keys, Zipf 1.0, "
          f"R=10, thread CPU time, median of {runs} runs after 3 warm-up runs)")
    settings = BuildSettings(reducers=10)
    totals = np.bincount(murmur3_32_array(keys).astype(np.int64) % settings.groups,
                         weights=counts, minlength=settings.groups).astype(np.int64)
    write_mapping(mapping_from_counts(KeyCounts(totals, keys, counts, True), settings),
                  work / "bench.imkp")
    vocab = work / "vocab.tsv"
    vocab.write_text("".join(f"{k}\t{int(c)}\n" for k, c in zip(keys.to_pylist(), counts, strict=True)),
                     encoding="utf-8")
    result = javaenv.run_java("org.hedge.imkp.PartitionerBench",
                              [str(work / "bench.imkp"), str(vocab), str(records), str(runs)],
                              HADOOP,
                              extra_classpath=(javaenv.shim_test_classes(),), timeout=900)
    if result.returncode != 0:
        print(f"micro-benchmark failed: {result.stderr[-500:]}")
        return
    figures = dict(line.split("=", 1) for line in result.stdout.split() if "=" in line)
    print(f"HashPartitioner {float(figures['hash_ns_per_record']):.2f} ns/record, "
          f"ImkpPartitioner {float(figures['imkp_ns_per_record']):.2f} ns/record, "
          f"ratio {float(figures['ratio']):.3f} (target <= 1.1)")
    print(f"ratio within each run (slices interleaved): median {float(figures['pair_ratio_median']):.3f}, "
          f"range {float(figures['pair_ratio_min']):.3f}-{float(figures['pair_ratio_max']):.3f}")


def timed(fn) -> tuple[float, float]:  # noqa: ANN001
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def child_cpu(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU seconds) of a child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def counter_cpu(path: Path) -> float:
    """CPU seconds of ``Counter(data.split())`` on the file's bytes, timed inside a child.

    Not in this process: after it ran here on the 1 M-distinct-key input, the in-process
    hedge build that followed measured 75-90 MB per CPU second instead of 163-175 (issue
    21, 2026-11-29; the cause, somewhere in the memory a dict of a million keys leaves
    behind, was not traced). A baseline must not slow what it is compared with."""
    code = ("import sys, time; from collections import Counter; "
            "data = open(sys.argv[1], 'rb').read(); t = time.process_time(); "
            "Counter(data.split()); print(time.process_time() - t)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                         capture_output=True, text=True).stdout
    return float(out)


def distinct_keys_text(path: Path, keys: int, draws: int) -> None:
    """Every one of ``keys`` distinct random keys (4-12 hex digits) once, plus ``draws``
    uniform draws among them, shuffled, 12 to a line."""
    rng = np.random.default_rng(21)
    pool: set[str] = set()
    while len(pool) < keys:
        bits = rng.integers(16, 49, size=keys)
        values = rng.integers(0, 1 << 48, size=keys, dtype=np.uint64) >> (48 - bits).astype(np.uint64)
        pool.update(f"{v:04x}" for v in values.tolist())
    vocab = np.array(sorted(pool)[:keys], dtype=object)
    order = np.concatenate([np.arange(keys), rng.integers(0, keys, size=draws)])
    rng.shuffle(order)
    tokens = vocab[order]
    lines = (" ".join(tokens[i:i + 12]) for i in range(0, len(tokens), 12))
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def build_throughput(files: dict[str, Path], runs: int) -> None:
    print(f"\n## 3. Build throughput, one thread (MB per CPU second, median of {runs} "
          "interleaved runs; target >= 100 and CLI <= 1.5 x in-process)")
    one = BuildSettings(reducers=10, threads=1)
    hedge = str(Path(sys.executable).with_name("hedge"))
    print(f"{'input':<22} {'MB':>5} {'hedge':>7} {'wc -w':>7} {'Counter':>8} {'x wc':>6} "
          f"{'x Counter':>9}  {'CLI':>6} {'CLI/in-proc':>11} {'jit CLI/in-proc':>15}")
    jit = {**os.environ, "HEDGE_IMKP_JIT": "1"}  # the word count through numba, not the AOT module
    first = None
    for name, path in files.items():
        mb = path.stat().st_size / 1e6
        build([str(path)], one)  # warm caches, imports and the compiled word count
        cli = [hedge, "imkp", "build", str(path), "-r", "10", "--threads", "1", "--no-progress",
               "-o", str(path.with_suffix(".imkp"))]
        cpu: dict[str, list[float]] = {"hedge": [], "wc": [], "counter": [], "cli": [],
                                       "jit": []}
        for _ in range(runs):  # interleaved, so load changes hit every method alike
            cpu["hedge"].append(timed(lambda: build([str(path)], one))[1])  # noqa: B023
            cpu["wc"].append(child_cpu(["wc", "-w", str(path)])[1])
            cpu["counter"].append(counter_cpu(path))
            cpu["cli"].append(child_cpu(cli)[1])
            cpu["jit"].append(child_cpu(cli, jit)[1])
        h, w, c, k, j = (float(np.median(cpu[x])) for x in ("hedge", "wc", "counter", "cli", "jit"))
        first = first or h
        print(f"{name:<22} {mb:>5.1f} {mb / h:>7.1f} {mb / w:>7.1f} {mb / c:>8.1f} {w / h:>6.2f} "
              f"{c / h:>9.2f}  {mb / k:>6.1f} {k / h:>11.2f} {j / h:>15.2f}")
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"(x wc, x Counter: CPU seconds of the baseline / hedge's; CLI: `hedge imkp build "
          f"--threads 1` as a command, its start-up included; CLI/in-proc: CPU seconds of "
          f"the command / in-process; jit: the same with HEDGE_IMKP_JIT=1, numba imported and "
          f"its cached kernels loaded instead of the ahead-of-time module; load average {load})")
    if first:
        fixed_cost(hedge, next(iter(files.values())).parent, first, runs)


def fixed_cost(hedge: str, work: Path, in_process: float, runs: int) -> None:
    """What every ``hedge imkp build`` costs, and the part no change to hedge's code can cut."""
    tiny = work / "two-words.txt"
    tiny.write_text("two words\n", encoding="ascii")
    build_cmd = [hedge, "imkp", "build", str(tiny), "-r", "10", "--threads", "1",
                 "--no-progress", "-o", str(work / "two-words.imkp")]
    rows = {
        "build, AOT word count": (build_cmd, None),
        "build, numba's jit": (build_cmd, {**os.environ, "HEDGE_IMKP_JIT": "1"}),
        "import hedge.cli, hedge.imkp.cli": (
            [sys.executable, "-c", "import hedge.cli, hedge.imkp.cli"], None),
        "import numpy, pyarrow, click": (
            [sys.executable, "-c", "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; "
                                   "import numpy, pyarrow, click"], None),
        "python -c pass": ([sys.executable, "-c", "pass"], None),
    }
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(runs):  # interleaved
        for name, (command, env) in rows.items():
            cpu[name].append(child_cpu(command, env)[1])
    print(f"fixed cost (CPU s, median of {runs} interleaved runs; the first input's in-process "
          f"build {in_process:.3f} s):")
    for name, times in cpu.items():
        median = float(np.median(times))
        print(f"  {name:<34} {median:.3f} ({min(times):.3f}-{max(times):.3f})  "
              f"(this + in-process) / in-process = {(median + in_process) / in_process:.2f}")
    print("  (the numpy, pyarrow and click row bounds CLI/in-proc from below while the command "
          "is Python on those libraries)")


# a command's help, for each area (before 2026-11-28 the slowest took 1.2-2.1 s: plan, nodes,
# reproduce and simulate imported their work's modules to print text)
HELP_COMMANDS = ("simulate", "plan chronos", "nodes rank", "reproduce", "serve", "detect study",
                 "traces stats", "imkp build")


def startup(runs: int) -> None:
    print(f"\n## 4. Start-up (median of {runs} runs; target hedge --help <= 0.3 s)")
    hedge = str(Path(sys.executable).with_name("hedge"))
    rows = {"python -c pass": [sys.executable, "-c", "pass"], "hedge --help": [hedge, "--help"]}
    for command in HELP_COMMANDS:  # each command's help: text, so none of its work's imports
        rows[f"hedge {command} --help"] = [hedge, *command.split(), "--help"]
    results = {name: [child_cpu(command) for _ in range(runs)] for name, command in rows.items()}
    base = float(np.median([cpu for _, cpu in results["python -c pass"]]))
    for name, timings in results.items():
        wall, cpu = (float(np.median(x)) for x in zip(*timings, strict=True))
        print(f"{name:<30} wall {wall:.3f} s  CPU {cpu:.3f} s  ({cpu / base:.1f} x python -c pass)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs (smoke test)")
    parser.add_argument("--skip-java", action="store_true", help="no Java parts")
    parser.add_argument("--only", choices=("skew", "partitioner", "build", "startup"),
                        help="run one part (skew table, partitioner cost, build throughput, "
                             "start-up)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of the build part")
    parser.add_argument("--java-runs", type=int, default=11,
                        help="timed runs of each partitioner (after 3 warm-up runs)")
    args = parser.parse_args()
    started = time.perf_counter()
    tokens = 200_000 if args.quick else 2_000_000
    records = 1_000_000 if args.quick else 10_000_000
    java = not args.skip_java and args.only in (None, "skew", "partitioner")
    if java:
        try:
            javaenv.shim_test_classes()
            javaenv.hadoop_jars(HADOOP)
        except Exception as exc:  # noqa: BLE001 - report and carry on without Java
            print(f"Java parts skipped: {exc}")
            java = False
    rng = np.random.default_rng(8)
    words = vocabulary(50_000, rng)
    word_array = np.array(words, dtype=object)
    with tempfile.TemporaryDirectory(prefix="bench_imkp_") as tmp:
        work = Path(tmp)
        inputs: dict[str, tuple[pa.Array, np.ndarray, Path | None]] = {}
        held_out: dict[str, tuple[pa.Array, np.ndarray, pa.Array, np.ndarray]] = {}
        truth = {f"zipf{s}": zipf_truth(s, words, 100 + i) for i, s in enumerate(EXPONENTS)}
        for i, s in enumerate(EXPONENTS):
            drawn = zipf_tokens(s, tokens, words, seed=100 + i)
            words_file = work / f"zipf{s}.txt"
            if java:
                words_file.write_text("\n".join(word_array[drawn]) + "\n", encoding="utf-8")
            inputs[f"zipf{s}"] = (*vocabulary_counts(drawn, words), words_file if java else None)
            other = vocabulary_counts(zipf_tokens(s, tokens, words, 100 + i, draw_seed=200 + i), words)
            held_out[f"zipf{s}"] = (*inputs[f"zipf{s}"][:2], *other)
        if SHAKESPEARE.exists():
            data = SHAKESPEARE.read_bytes()
            keys, counts = distinct_counts(tokenize(data))
            words_file = work / "shakespeare.txt"
            words_file.write_bytes(b"\n".join(tokenize(data).to_pylist()) + b"\n")
            inputs["shakespeare"] = (keys, counts, words_file if java else None)
            lines = np.array(data.split(b"\n"), dtype=object)
            half = np.random.default_rng(3).permutation(len(lines)) < len(lines) // 2
            held_out["shakespeare"] = (*distinct_counts(tokenize(b"\n".join(lines[half]))),
                                       *distinct_counts(tokenize(b"\n".join(lines[~half]))))
        else:
            print(f"Tiny Shakespeare rows skipped: {SHAKESPEARE} not found")
        if args.only in (None, "skew"):
            skew_table(inputs, held_out, truth, java, work)
            if java:
                verify_totalorder(inputs["zipf1.0"][2], *inputs["zipf1.0"][:2], work)
        if java and args.only in (None, "partitioner"):
            partitioner_cost(*inputs["zipf1.0"][:2], work, records, args.java_runs)
        if args.only in (None, "build"):
            size = (4 if args.quick else 32) * 10**6
            text = work / "text.txt"
            source = SHAKESPEARE.read_bytes() if SHAKESPEARE.exists() else \
                "\n".join(words[k] for k in zipf_tokens(1.0, 200_000, words, 1)).encode()
            text.write_bytes(source * max(1, size // len(source)))
            distinct = work / "distinct.txt"
            scale = 8 if args.quick else 1
            distinct_keys_text(distinct, 1_000_000 // scale, 2_500_000 // scale)
            name = "shakespeare x" + str(max(1, size // len(source)))
            build_throughput({name: text, f"{1_000_000 // scale:,} distinct keys": distinct},
                             args.runs)
        if args.only in (None, "startup"):
            startup(args.runs)
    print(f"\nbench_imkp took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
