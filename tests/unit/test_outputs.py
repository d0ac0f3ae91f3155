"""Where results go is checked before the work, and files are written whole (hedge.outputs)."""

from __future__ import annotations

import pytest

from hedge.cli import main
from hedge.errors import HedgeError
from hedge.outputs import check_output, write_atomic


@pytest.fixture()
def blocker(tmp_path):
    """A regular file where a folder would have to be."""
    path = tmp_path / "a-file"
    path.write_text("not a folder\n")
    return path


def test_check_output_names_the_option_and_what_is_wrong(tmp_path, blocker):
    with pytest.raises(HedgeError, match=r"^--out .*: cannot create .*a-file/x \(Not a direc"):
        check_output(blocker / "x", "--out", directory=True)
    with pytest.raises(HedgeError, match=r"^--json .*: a directory, expected the path of a "):
        check_output(tmp_path, "--json", directory=False)


def test_check_output_leaves_no_folder_behind(tmp_path):
    """A missing folder is proved makeable, then removed: a run that fails after the check
    leaves nothing; one that already exists stays."""
    check_output(tmp_path / "new" / "deeper" / "t.json", "--json", directory=False)
    check_output(tmp_path / "out" / "sub", "--out", directory=True)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    check_output(tmp_path / "kept", "--out", directory=True)
    assert (tmp_path / "kept").is_dir()
    write_atomic(tmp_path / "new" / "deeper" / "t.json", "{}")  # the write makes it for good
    assert (tmp_path / "new" / "deeper" / "t.json").read_text() == "{}"


def test_write_atomic_replaces_whole_and_leaves_no_temporary(tmp_path):
    path = write_atomic(tmp_path / "sub" / "a.txt", "one")
    write_atomic(path, "two")
    assert path.read_text() == "two" and [p.name for p in path.parent.iterdir()] == ["a.txt"]


@pytest.mark.parametrize("command", [
    ["traces", "stats", "{trace}", "--out", "{blocked}"],
    ["detect", "study", "--repetitions", "1", "--json", "{blocked}/rows.json"],
    ["reproduce", "heartbeat", "--quick", "--out", "{blocked}"],
])
def test_commands_refuse_an_unwritable_output_before_working(command, blocker, capsys):
    trace = blocker.parent / "t.tr"  # never read: the output is refused first
    args = [a.format(trace=trace, blocked=blocker / "out") for a in command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "cannot create" in err and len(err.strip().splitlines()) == 1, err
    assert blocker.read_text() == "not a folder\n"


def test_a_run_refused_after_the_check_leaves_no_empty_folder(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["simulate", "--out", str(out), "--json", str(tmp_path / "j" / "r.json"),
                 "--policy", "hedge-auto:lam=2"]) == 2
    assert "lam = 2.0: expected in [0, 1]" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
