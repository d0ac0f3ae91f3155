"""The `hedge` entry point: version, help, and errors as one line with an exit status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from hedge import __version__
from hedge.cli import COMMANDS, cli, main
from hedge.errors import HedgeError

HEDGE = Path(sys.executable).with_name("hedge")


def test_version_from_the_installed_entry_point() -> None:
    result = subprocess.run([str(HEDGE), "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"hedge, version {__version__}"


def test_help_lists_every_area(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_unknown_command_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert "No such command 'no-such-command'" in err
    assert "Traceback" not in err


def test_hedge_error_becomes_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    @cli.command("explode-for-test")
    def explode() -> None:
        raise HedgeError("trace.csv:3: field 'time' = 'abc', expected a number")

    try:
        assert main(["explode-for-test"]) == 2
    finally:
        cli.commands.pop("explode-for-test")
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["hedge: error: trace.csv:3: field 'time' = 'abc', expected a number"]


def test_unexpected_exception_has_no_traceback_unless_debug(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @cli.command("crash-for-test")
    def crash() -> None:
        raise RuntimeError("boom")

    try:
        assert main(["crash-for-test"]) == 1
        assert "internal error: RuntimeError: boom" in capsys.readouterr().err
        with pytest.raises(RuntimeError):
            main(["--debug", "crash-for-test"])
    finally:
        cli.commands.pop("crash-for-test")


def test_every_registered_command_imports() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        assert cli.get_command(ctx, name) is not None, name


def test_usage_error_is_one_line_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--deadline", "soon"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["hedge: error: Invalid value for '--deadline': 'soon' is not a valid float. "
                   "(see 'hedge simulate --help')"]


@pytest.mark.parametrize(("args", "said"), [
    (["simulate", "--seed", "0", "--seed=1"], "--seed given more than once (--seed 0, --seed 1)"),
    (["imkp", "build", "-r", "2", "x", "--reducers", "3", "-o", "m"],
     "-r/--reducers given more than once (-r 2, --reducers 3)"),
])
def test_a_one_value_option_given_twice_is_refused(capsys: pytest.CaptureFixture[str],
                                                   args: list[str], said: str) -> None:
    """click keeps an option's last value and drops the others silently; hedge refuses."""
    assert main(args) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"hedge: error: {said}: it takes one value, and only the last "
                           "would be used (see 'hedge "), line


def test_options_given_once_or_after_a_double_dash_are_not_counted() -> None:
    from hedge.cli import repeated_option
    from hedge.sim.cli import simulate

    assert repeated_option(simulate, ["--seed", "0", "--trace", "--seed"]) is None  # a value
    assert repeated_option(simulate, ["--seed", "0", "--", "--seed", "1"]) is None
    assert repeated_option(simulate, ["--policy", "none", "--policy", "late"]) is None


def test_simulate_runs_every_policy_of_a_repeated_policy_option(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--synthetic", "jobs=2,tasks=3", "--policy", "none",
                 "--policy", "hadoop,late", "--quiet"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert rows[rows.index("policy") + 1:][:3] == ["none", "hadoop", "late"]


def test_multi_line_hedge_error_is_printed_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    @cli.command("multiline-for-test")
    def multiline() -> None:
        raise HedgeError("hedge.ini: not a valid settings file: no section headers.\nline: 1")

    try:
        assert main(["multiline-for-test"]) == 2
    finally:
        cli.commands.pop("multiline-for-test")
    assert capsys.readouterr().err.splitlines() == [
        "hedge: error: hedge.ini: not a valid settings file: no section headers. line: 1"]
