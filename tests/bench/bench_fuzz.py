"""The bad-input suite at a larger scale (issue 20): N random inputs per reader and option,
each judged as in tests/unit/test_fuzz_*.py (exit 0 with sane output, or exit 2 with one
line naming the file or option; a failed simulate writes no --json). Prints, per reader,
the inputs tried and how many ended otherwise (goal: 0), and the total.

    .venv/bin/python tests/bench/bench_fuzz.py [--inputs 200] [--seed 0]   (a few minutes)
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz_support import (  # noqa: E402
    BAD_TEXT,
    BINARY_OPS,
    TEXT_OPS,
    check_trace,
    judge,
    mutate,
    ops_for,
    random_mutations,
    run_cli,
    shared_seeds,
    test_seeds,
)
from tests.unit.test_fuzz_cli import OPTIONS, SMALL  # noqa: E402
from tests.unit.test_fuzz_inputs import FRAME, HISTORY, IMKP, SETTINGS, decode, resealed  # noqa: E402

from hedge.errors import HedgeError  # noqa: E402

Check = Callable[[random.Random, Path], str | None]


def trace_check(seed) -> Check:
    def check(rng: random.Random, folder: Path) -> str | None:
        data = mutate(seed.data, seed.kind, random_mutations(rng, ops_for(seed.kind)))
        return check_trace(folder, seed, data, simulate=rng.random() < 0.25)
    return check


def imkp_check(rng: random.Random, folder: Path) -> str | None:
    data = mutate(IMKP, "binary", random_mutations(rng, BINARY_OPS, 2))
    path = folder / "fuzz.imkp"
    path.write_bytes(resealed(data) if rng.random() < 0.5 else data)
    argv = ["imkp", "show", str(path), "--json"] if rng.random() < 0.5 \
        else ["imkp", "lookup", str(path), "the", ""]
    return judge(run_cli(argv), [path.name], json_out="show" in argv)


def history_check(rng: random.Random, folder: Path) -> str | None:
    path = folder / "history.csv"
    path.write_bytes(mutate(HISTORY.encode(), "text:,", random_mutations(rng, TEXT_OPS)))
    return judge(run_cli(["nodes", "rank", str(path), "--json"]), [path.name], True)


def settings_check(rng: random.Random, folder: Path) -> str | None:
    path, token = folder / "hedge.ini", folder / "token"
    if not token.exists():
        token.write_text("0123456789abcdef0123\n")
        token.chmod(0o600)
    data = mutate(SETTINGS.encode(), "text:=", random_mutations(rng, TEXT_OPS))
    path.write_bytes(data.replace(b"http", b"htxp"))  # nothing --check would probe
    outcome = run_cli(["serve", "--check", "--config", str(path), "--token-file", str(token)])
    return judge(outcome, [path.name, "policy", "--config"])


def wire_check(rng: random.Random, folder: Path) -> str | None:
    if rng.random() < 0.3:
        data = bytes(rng.randrange(256) for _ in range(rng.randint(88, 300)))
    else:
        data = mutate(FRAME, "binary", random_mutations(rng, BINARY_OPS, 2))
    try:
        decode(data)
    except HedgeError as exc:
        if not str(exc).startswith("scan request: ") or "\n" in str(exc):
            return f"unclear error {exc}"
    except Exception as exc:  # noqa: BLE001 - what the bench counts
        return f"{type(exc).__name__}: {exc}"
    return None


def option_check(prefix: list[str], option: str, names: list[str]) -> Check:
    def check(rng: random.Random, folder: Path) -> str | None:
        text = rng.choice(BAD_TEXT + SMALL)
        if option in ("--cluster", "--synthetic"):
            keys = ["nodes", "slots", "hw", "jobs", "tasks", "mean", "rate", "bogus"]
            text = ",".join(f"{rng.choice(keys)}={rng.choice(BAD_TEXT + SMALL)}"
                            for _ in range(rng.randint(1, 2)))
        trace = folder / "small.tr"
        trace.write_text("0 3 5.0 4.0 5.0 9.0\n10 2 5.0 5.0 5.0\n")
        out = folder / "out.json"
        out.unlink(missing_ok=True)
        argv = [str(trace) if p == "TRACE" else p for p in prefix] + [f"{option}={text}"]
        if prefix[0] == "simulate":
            argv += ["--json", str(out)]
        problem = judge(run_cli(argv, [out]), [*names, text] if text.strip() else names)
        return problem and f"{argv}: {problem}"
    return check


def checks() -> dict[str, Check]:
    found: dict[str, Check] = {}
    for seed in shared_seeds() + test_seeds():
        if seed.reader != "imkp":
            found[f"{seed.reader} ({seed.name})"] = trace_check(seed)
    found |= {"imkp mapping": imkp_check, "nodes CSV history": history_check,
              "hedge.ini (serve --check)": settings_check, "wire decode_request": wire_check}
    for prefix, option, _, names in OPTIONS:
        found[f"{' '.join(p for p in prefix[:2])} {option}"] = option_check(prefix, option,
                                                                              names)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=200, help="inputs per reader/option")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # hedge nodes logs warnings; they are not the verdict
    folder = Path(tempfile.mkdtemp(prefix="hedge-bench-fuzz-"))
    total_tried = total_bad = 0
    start = time.process_time()
    print(f"{'reader / option':<58} {'tried':>6} {'bad':>5}")
    for name, check in checks().items():
        rng = random.Random(f"{args.seed}:{name}")
        bad, example = 0, None
        for _ in range(args.inputs):
            problem = check(rng, folder)
            if problem:
                bad += 1
                example = example or problem
        total_tried += args.inputs
        total_bad += bad
        print(f"{name[:58]:<58} {args.inputs:>6} {bad:>5}", flush=True)
        if example:
            print(f"    first: {example[:400]}")
    print(f"{'total':<58} {total_tried:>6} {total_bad:>5}   "
          f"({time.process_time() - start:.0f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
