"""``hedge imkp build | show | lookup`` end to end through the CLI entry point."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hedge.cli import main
from hedge.imkp.mapfile import read_mapping
from tests.integration.hadoop_job import tokenize
from tests.integration.test_imkp_wordcount import zipf_text


@pytest.fixture()
def built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    text = zipf_text(20_000, 1.2) + "Zürich Zürich\n"
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "job.imkp"
    assert main(["imkp", "build", str(tmp_path / "in.txt"), "-r", "4", "--scale", "8",
                 "-o", str(out), "--no-progress"]) == 0
    assert "max/LB" in capsys.readouterr().out
    return out


def test_show_json_has_the_documented_keys(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["imkp", "show", str(built), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    text = (built.parent / "in.txt").read_text(encoding="utf-8")
    counts = Counter(tokenize(text))
    assert shown["reducers"] == 4 and shown["groups"] == 32
    assert shown["total"] == sum(counts.values()) == sum(shown["loads"])
    assert shown["heaviest_key_count"] == max(counts.values())
    assert shown["heaviest_key_exact"] is True and shown["heaviest_key_note"] is None
    assert shown["lower_bound"] == max(-(-shown["total"] // 4), shown["heaviest_key_count"])
    assert len(shown["loads"]) == 4
    assert shown["max_over_lb"] == pytest.approx(max(shown["loads"]) / shown["lower_bound"])
    assert main(["imkp", "show", str(built)]) == 0
    assert "CV" in capsys.readouterr().out


def test_overflowed_key_table_reports_a_bound_not_a_count(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.txt").write_text(" ".join(f"k{i % 97}" for i in range(1000)) + "\n")
    out = tmp_path / "job.imkp"
    assert main(["imkp", "build", str(tmp_path / "in.txt"), "-r", "3", "--scale", "2",
                 "--max-keys", "5", "-o", str(out), "--no-progress"]) == 0
    note = "no key has more than 76 records (exact count not kept: --max-keys overflowed)"
    printed = capsys.readouterr().out
    assert f"heaviest key     {note}" in printed  # 1000 // (max(5, 2 x 6) + 1)
    assert "lower bound LB   334  (ceil(total/R)" in printed
    assert out.read_bytes() == (Path(__file__).parents[1] / "data" / "imkp_bound.imkp").read_bytes()
    assert main(["imkp", "show", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["heaviest_key_count"] is None and shown["heaviest_key_exact"] is False
    assert shown["heaviest_key_at_most"] == 76 and shown["heaviest_key_note"] == note
    assert shown["lower_bound"] == 334


def test_lookup_arguments_and_stdin_agree_with_the_mapping(
        built: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    mapping = read_mapping(built)
    keys = ["w0", "Zürich", "never-seen", "wörd7"]
    assert main(["imkp", "lookup", str(built), *keys]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{k}\t{mapping.reducer_of(k)}" for k in keys]
    stdin = io.TextIOWrapper(io.BytesIO("\n".join(keys).encode() + b"\n"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["imkp", "lookup", str(built), "-"]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_errors_are_one_line_exit_2_and_leave_no_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.txt").write_text("a b c\n")
    assert main(["imkp", "build", str(tmp_path / "in.txt"), "-r", "0", "-o",
                 str(tmp_path / "m.imkp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--reducers 0" in err and "Traceback" not in err
    (tmp_path / "bad.imkp").write_bytes(b"HEDGEIMK\x00\x09" + bytes(60))
    assert main(["imkp", "show", str(tmp_path / "bad.imkp")]) == 2
    assert "version 9" in capsys.readouterr().err
    assert main(["imkp", "build", str(tmp_path / "in.txt"), "-r", "2", "-o",
                 str(tmp_path)]) == 2  # a folder where the mapping file should go
    assert f"-o {tmp_path}: a directory, expected the path of the mapping file" in (
        capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.imkp", "in.txt"]


def test_progress_bar_reports_bytes_per_second(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.txt").write_text("to be or not to be\n" * 1000)
    assert main(["imkp", "build", str(tmp_path / "in.txt"), "-r", "2", "-o",
                 str(tmp_path / "m.imkp"), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "imkp build" in err and "B/s" in err and "18.6k" in err  # 19,000 bytes read


def test_build_freezes_the_collector_at_exit_only(built: Path, tmp_path: Path) -> None:
    # In-process: a build freezes nothing, this process still collects (compared with the
    # count before it: other code in the same process, e.g. `hedge serve` run in-process by
    # an earlier test, may have frozen objects of its own).
    before = gc.get_freeze_count()
    assert main(["imkp", "build", str(built.parent / "in.txt"), "-r", "2", "--no-progress",
                 "-o", str(tmp_path / "again.imkp")]) == 0
    assert gc.get_freeze_count() == before
    # A process that ran a build has frozen its objects by the time shutdown collects them
    # (the atexit hook registered before the build runs after the build's own).
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
             "from hedge.cli import main\n"
             f"sys.exit(main(['imkp', 'build', {str(built.parent / 'in.txt')!r}, '-r', '2', "
             f"'--no-progress', '-o', {str(tmp_path / 'exit.imkp')!r}]))")
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(repo / "python")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "frozen True"


THREADS_AFTER = ("import os, sys; {before}import hedge.imkp.cli; "
                 "print(len(os.listdir('/proc/self/task')), 'OPENBLAS_NUM_THREADS' in os.environ)")


def test_imkp_commands_load_openblas_with_one_thread_and_leave_the_environment() -> None:
    def threads_after(before: str = "", **env: str) -> tuple[int, bool]:
        environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        out = subprocess.run([sys.executable, "-c", THREADS_AFTER.format(before=before)],
                             env={**environ, **env}, capture_output=True, text=True, check=True)
        count, has = out.stdout.split()
        return int(count), has == "True"

    ours, left = threads_after()
    usual, _ = threads_after("import numpy; ")  # numpy first: OpenBLAS's own thread count
    assert not left  # the variable was only there while numpy loaded
    if (os.cpu_count() or 1) > 1:
        assert ours < usual
        assert threads_after(OPENBLAS_NUM_THREADS="2") == (usual, True)  # the user's choice
    else:
        assert ours == usual
