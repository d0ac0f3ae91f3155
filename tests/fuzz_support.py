"""The bad-input suite's machinery (issue 20): run the CLI in-process, judge what came out,
and mutate real input files in memory.

What every input must end in (``judge``):

- exit 0 with sane output: something on stdout, strict JSON when ``--json`` asked for it
  (no NaN or Infinity literals), no traceback; or
- exit 2 with exactly one error line on stderr, ``hedge: error: ...``, naming the file,
  field or option at fault (one of the ``names`` the caller expects, case aside), no
  traceback and no "internal error"; the only other lines allowed are what the command said
  it was about to do (``hedge simulate``'s ``workload:``, ``cluster:`` and ``speculation:`` lines), notes and
  warnings (``CONTEXT``);

and in both cases, on failure, every output file named on the command line absent or
unchanged. Log records (``hedge nodes`` logs warnings through ``logging``) are not stderr
lines here: in-process they go to the logging system.

A mutation is a tuple ``(op, where, k)``: an operation name, a position in [0, 1] and a
small integer choosing a field and a value. Hypothesis draws them in the tests
(``mutations()``), ``random.Random`` in the benchmark (``random_mutations``); both apply
them with ``mutate``, deterministically.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import random
import re
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings

from hedge.cli import main

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DATA = REPO / "tests" / "data"

# The suite's Hypothesis settings: reproducible in CI (derandomize, no example database),
# no per-example deadline (a run's time is bounded by RUN_LIMIT_S instead); each test sets
# its own max_examples to keep the suite's CPU time within budget.
FUZZ = settings(deadline=None, derandomize=True, database=None, print_blob=False,
                suppress_health_check=list(HealthCheck))

# One run longer than this is a failure too (a value that makes a reader or the simulator
# spin); generous because the machine is shared.
RUN_LIMIT_S = 20.0

# Values a field may be replaced with: not-numbers, signs, overflow, wrong types, empties.
BAD_TEXT = ["nan", "NaN", "-1", "1e308", "-1e308", "inf", "-inf", "18446744073709551617",
            "99999999999999999999999999999", "", "abc", "0", "-0", "0.5", "true", "null",
            '"', "\u00e9", "1,2", " ", "1e-320", "0x10", "-9223372036854775809"]
BAD_JSON: list[object] = [None, True, "x", "", -1, 0, float("nan"), float("inf"), 1e308,
                          10**30, -(10**30), [], {}, "nan", 1.5, -1e308, "1e308", 2**63]

TEXT_OPS = ("truncate", "flip", "insert", "field", "delete_field", "swap", "column",
            "dup_line", "del_line")
JSON_OPS = ("truncate", "flip", "leaf", "delete_key", "leaf_type")
BINARY_OPS = ("truncate", "flip", "insert", "delete", "overwrite")

Mutation = tuple[str, float, int]


class TooSlow(BaseException):
    """Raised by the run timer (a BaseException, so the CLI's catch-all does not eat it)."""


@dataclass
class Outcome:
    argv: list[str]
    code: int | str
    out: str
    err: str
    seconds: float
    changed_outputs: list[str] = field(default_factory=list)


def _on_alarm(signum: int, frame: object) -> None:
    raise TooSlow()


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` of wall time (main thread only)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    out: dict[Path, bytes | None] = {}
    for p in paths:
        if p.is_dir():
            out[p] = b"".join(sorted(f.name.encode() + f.read_bytes()
                                     for f in p.rglob("*") if f.is_file()))
        else:
            out[p] = p.read_bytes() if p.exists() else None
    return out


def run_cli(argv: list[str], outputs: list[Path] = (), limit: float = RUN_LIMIT_S
            ) -> Outcome:
    """``hedge ARGV`` in this process: exit code, stdout, stderr; ``outputs``: files the
    command may write, compared before and after."""
    before = _snapshot(list(outputs))
    sweep = sys.modules.get("hedge.sim.sweep")
    if sweep is not None:  # the sweep keeps one workload per process, keyed by trace path
        sweep._CACHE.clear()
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with time_limit(limit):
                code: int | str = main(list(argv))
        except TooSlow:
            code = f"slow (> {limit:g} s)"
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - anything escaping main is a finding
            code = "raised"
            err.write(traceback.format_exc())
    after = _snapshot(list(outputs))
    changed = [str(p) for p in outputs if before[p] != after[p]]
    return Outcome(list(argv), code, out.getvalue(), err.getvalue(),
                   time.perf_counter() - start, changed)


# What a command may print on stderr before its one error line: what it was about to run
# (``hedge simulate``: the workload and cluster lines), notes and warnings.
CONTEXT = re.compile(r"^(workload|cluster|speculation|note|report|hedge: warning): ")


def _reject_constant(name: str) -> object:
    raise ValueError(f"non-standard JSON literal {name}")


def judge(outcome: Outcome, names: list[str], json_out: bool = False) -> str | None:
    """None when the outcome is one of the two good ends (module docstring), else why not.

    ``names``: strings of which the error line must contain at least one (the input file's
    name, the option or field under test)."""
    err_lines = [line for line in outcome.err.splitlines() if line.strip()]
    if "Traceback" in outcome.err or "internal error" in outcome.err:
        return f"traceback or internal error: {outcome.err.strip()[-300:]!r}"
    if outcome.code == 0:
        if not outcome.out.strip():
            return "exit 0 with nothing on stdout"
        if json_out:
            try:
                json.loads(outcome.out, parse_constant=_reject_constant)
            except ValueError as exc:
                return f"exit 0 but stdout is not strict JSON ({exc})"
        return None
    if outcome.code != 2:
        return f"exit {outcome.code!r}: {outcome.err.strip()[-300:]!r}"
    if outcome.changed_outputs:
        return f"failed but wrote {outcome.changed_outputs}"
    errors = [line for line in err_lines if line.startswith("hedge: error: ")]
    others = [line for line in err_lines if not CONTEXT.match(line)]
    if len(errors) != 1 or others != errors:
        return f"exit 2 with {len(err_lines)} stderr lines: {outcome.err.strip()[:300]!r}"
    wanted = {n.lower() for n in names} | {n.lstrip("-").lower() for n in names if n.strip("-")}
    if not any(n in errors[0].lower() for n in wanted):
        return f"error names none of {names}: {errors[0][:300]!r}"
    return None


# ------------------------------------------------------------------------------ mutation


def mutations(ops: tuple[str, ...], max_size: int = 3):
    """Hypothesis strategy of 1..max_size mutations."""
    from hypothesis import strategies as st

    one = st.tuples(st.sampled_from(ops), st.floats(0.0, 1.0), st.integers(0, 10_000))
    return st.lists(one, min_size=1, max_size=max_size)


def random_mutations(rng: random.Random, ops: tuple[str, ...], max_size: int = 3
                     ) -> list[Mutation]:
    return [(rng.choice(ops), rng.random(), rng.randrange(10_001))
            for _ in range(rng.randint(1, max_size))]


def _at(where: float, n: int) -> int:
    """An index in range(n) for a position in [0, 1] (n >= 1)."""
    return min(n - 1, int(where * n))


def mutate_bytes(data: bytes, op: str, where: float, k: int) -> bytes:
    """Byte-level damage; ``data`` may be empty."""
    pos = _at(where, len(data) + 1) if data else 0
    if op == "truncate":
        return data[:pos]
    if op == "flip" and data:
        i = min(pos, len(data) - 1)
        return data[:i] + bytes([data[i] ^ (1 + k % 255)]) + data[i + 1:]
    if op == "insert":
        chunk = BAD_TEXT[k % len(BAD_TEXT)].encode() or bytes([k % 256])
        return data[:pos] + chunk + data[pos:]
    if op == "delete":
        return data[:pos] + data[pos + 1 + k % 64:]
    if op == "overwrite":  # huge lengths, counts and varints
        return data[:pos] + b"\xff" * (1 + k % 9) + data[pos + 1 + k % 9:]
    return data


_KV = re.compile(r'="((?:[^"\\]|\\.)*)"')


def _fields(line: str, delimiter: str) -> list[str]:
    if delimiter == "kv":
        return _KV.findall(line)
    return line.split(delimiter)


def _with_fields(line: str, delimiter: str, fields: list[str]) -> str:
    if delimiter == "kv":
        values = iter(fields)
        return _KV.sub(lambda m: '="' + next(values, "").replace('"', '\\"') + '"', line)
    return delimiter.join(fields)


def mutate_text(data: bytes, op: str, where: float, k: int, delimiter: str) -> bytes:
    """Line and field damage of a delimited (or ``KEY="value"``) text file."""
    if op in ("truncate", "flip", "insert"):
        return mutate_bytes(data, op, where, k)
    lines = data.decode("utf-8", errors="replace").split("\n")
    i = _at(where, len(lines))
    bad = BAD_TEXT[(k // 7) % len(BAD_TEXT)]
    if op == "dup_line":
        lines.insert(i, lines[i])
    elif op == "del_line":
        del lines[i]
    elif delimiter == "kv" and op in ("delete_field", "swap"):
        lines[i] = re.sub(r'\w+="(?:[^"\\]|\\.)*"', "", lines[i], count=1)
    else:
        fields = _fields(lines[i], delimiter)
        if not fields:
            return "\n".join(lines).encode()
        j = k % len(fields)
        if op == "field":
            fields[j] = bad
            lines[i] = _with_fields(lines[i], delimiter, fields)
        elif op == "delete_field":
            del fields[j]
            lines[i] = _with_fields(lines[i], delimiter, fields)
        elif op in ("swap", "column"):
            j2 = (k // len(fields)) % len(fields)
            for n, line in enumerate(lines):
                f = _fields(line, delimiter)
                if len(f) > max(j, j2):
                    if op == "swap":
                        f[j], f[j2] = f[j2], f[j]
                    else:
                        f[j] = bad
                    lines[n] = _with_fields(line, delimiter, f)
    return "\n".join(lines).encode()


def _json_docs(data: bytes, prefix_lines: int) -> tuple[str, list[object]]:
    text = data.decode("utf-8", errors="replace")
    head = text.split("\n")[:prefix_lines]
    rest = text.split("\n", prefix_lines)[-1] if prefix_lines else text
    rest = re.sub(r"\A\s*/\*.*?\*/", "", rest, flags=re.S)
    decoder, pos, docs = json.JSONDecoder(), 0, []
    while True:
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
        if pos >= len(rest):
            break
        doc, pos = decoder.raw_decode(rest, pos)
        docs.append(doc)
    return "".join(h + "\n" for h in head), docs


def _leaves(node: object, path: tuple = ()) -> Iterator[tuple[tuple, object]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for n, value in enumerate(node):
            yield from _leaves(value, (*path, n))
    else:
        yield path, node


def _set(root: list, path: tuple, value: object, delete: bool) -> None:
    node = root
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value


def mutate_json(data: bytes, op: str, where: float, k: int, prefix_lines: int) -> bytes:
    """Leaf damage of concatenated JSON documents (Rumen) or one JSON event per line after
    ``prefix_lines`` header lines (.jhist Avro-Json); byte damage for the rest."""
    if op in ("truncate", "flip"):
        return mutate_bytes(data, op, where, k)
    try:
        head, docs = _json_docs(data, prefix_lines)
    except ValueError:  # already broken by an earlier mutation
        return mutate_bytes(data, "flip", where, k)
    leaves = list(_leaves(docs))
    if not leaves:
        return data
    path, old = leaves[_at(where, len(leaves))]
    if op == "leaf_type":  # the same value, of another type
        value: object = str(old) if not isinstance(old, str) else [old]
    else:
        value = BAD_JSON[k % len(BAD_JSON)]
    _set(docs, path, value, delete=op == "delete_key")
    sep = "\n" if prefix_lines else "\n"
    return (head + sep.join(json.dumps(d) for d in docs) + "\n").encode()


def mutate(data: bytes, kind: str, muts: list[Mutation]) -> bytes:
    """Apply mutations for an input of ``kind``: ``text:<delimiter>`` (``,``, ``\\t``,
    ``" "``, ``=`` or ``kv``), ``json:<header lines>`` or ``binary``."""
    family, _, arg = kind.partition(":")
    for op, where, k in muts:
        if family == "text":
            data = mutate_text(data, op, where, k, arg)
        elif family == "json":
            data = mutate_json(data, op, where, k, int(arg))
        else:
            data = mutate_bytes(data, op, where, k)
    return data


def ops_for(kind: str) -> tuple[str, ...]:
    return {"text": TEXT_OPS, "json": JSON_OPS}.get(kind.partition(":")[0], BINARY_OPS)


# ------------------------------------------------------------------------------ corpus


@dataclass(frozen=True)
class Seed:
    """A small real input: ``reader`` names what reads it, ``kind`` how to mutate it."""

    reader: str
    name: str
    data: bytes
    kind: str


def _head(path: Path, lines: int) -> bytes:
    """The first ``lines`` lines of a (possibly gzip) file."""
    with open(path, "rb") as f:
        opener = gzip.open if f.read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return b"".join(f.readline() for _ in range(lines))


# (reader, file under ../shared/data, lines kept, kind); kept small so that a mutated copy
# is read (and simulated) in well under a second
SHARED_SEEDS = (
    ("google", "google_clusterdata_2011_2/task_events/part-00001-of-00500.csv.gz", 2000,
     "text:,"),
    ("alibaba2017", "alibaba_v2017/batch_task.csv", 200, "text:,"),
    ("alibaba2018", "alibaba_v2018/machine_meta.csv", 30, "text:,"),
    ("swim", "swim_facebook/FB-2009_samples_24_times_1hr_0.tsv", 60, "text:\t"),
    ("rumen", "hadoop_testdata/rumen_small-trace-test/mr2_counters-test-trace.json.gz",
     100_000, "json:0"),
    ("rumen", "hadoop_testdata/hadoop-gridmix/wordcount.json", 100_000, "json:0"),
    ("jhist", "hadoop_testdata/hadoop-mapreduce-client-jobclient/job_1329348432655_0001-10"
     ".jhist", 100_000, "json:2"),
    ("jhist", "hadoop_testdata/hadoop-mapreduce-client-hs/job_0.23.9-FAILED.jhist", 100_000,
     "json:2"),  # a failed job: no task completed, an error to keep clear under mutation
    ("mrv1", "hadoop_testdata/rumen_small-trace-test/mr2_jobhistory_job_201002080801_40864"
     ".gz", 100_000, "text:kv"),
    ("tr", "hawk_eagle_tr_traces/GOOG_subtrace.tr.gz", 20, "text: "),
    ("spark", "spark_eventlogs/application_1578436911597_0052", 100_000, "json:0"),
)

TEST_SEEDS = (
    ("jhist_binary", "straggler-job-hadoop-3.4.1.jhist", "binary"),
    ("imkp", "imkp_small.imkp", "binary"),
)


def shared_seeds() -> list[Seed]:
    """Seeds cut from ../shared/data (empty when it is absent)."""
    if not SHARED_DATA.is_dir():
        return []
    out = []
    for reader, relative, lines, kind in SHARED_SEEDS:
        path = SHARED_DATA / relative
        if path.is_file():
            out.append(Seed(reader, Path(relative).name, _head(path, lines), kind))
    return out


def test_seeds() -> list[Seed]:
    return [Seed(reader, name, (TEST_DATA / name).read_bytes(), kind)
            for reader, name, kind in TEST_SEEDS]


test_seeds.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


# --------------------------------------------------------------------- per-reader commands


def trace_file(folder: Path, seed: Seed, data: bytes) -> Path:
    suffix = ".jhist" if seed.reader.startswith("jhist") else ".txt"
    path = folder / f"fuzz-{seed.reader}{suffix}"
    path.write_bytes(data)
    return path


def check_trace(folder: Path, seed: Seed, data: bytes, simulate: bool = False) -> str | None:
    """``hedge traces stats --json`` (and with ``simulate``, ``hedge simulate --policy none
    --json OUT``) on a mutated trace; the problem found, or None."""
    path = trace_file(folder, seed, data)
    problem = judge(run_cli(["traces", "stats", str(path), "--json"]), [path.name], True)
    if problem or not simulate:
        return problem and f"traces stats: {problem}"
    out = folder / "sim.json"
    out.unlink(missing_ok=True)
    outcome = run_cli(["simulate", "--trace", str(path), "--policy", "none", "--quiet",
                       "--cluster", "nodes=20,slots=2", "--json", str(out)], [out])
    problem = judge(outcome, [path.name, "--trace"])
    if problem is None and outcome.code == 0 and not out.is_file():
        problem = "exit 0 without writing --json"
    return problem and f"simulate: {problem}"


def finite_json(value: object) -> bool:
    """No NaN or infinity anywhere in a parsed JSON value."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite_json(v) for v in value.values())
    if isinstance(value, list):
        return all(finite_json(v) for v in value)
    return True
