"""The ``hedge`` command line.

Each area (simulator, detection, planning, nodes, ImKP, control plane) owns its commands in
its own module; they are listed in ``COMMANDS`` and imported only when used, so ``hedge
--help`` stays fast. Errors reach the user as one line and a non-zero exit status; ``--debug``
shows the traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

from hedge import __version__
from hedge.errors import HedgeError

# name -> (module:attribute, one-line help). Add an area's command group here.
COMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("hedge.sim.cli:simulate", "Replay a workload under speculation policies."),
    "detect": ("hedge.detect.cli:detect", "Straggler detection studies (accuracy, estimation error)."),
    "imkp": ("hedge.imkp.cli:imkp", "ImKP: build, show and look up key-to-reducer mappings that balance reducer input."),
    "plan": ("hedge.analysis.cli:plan", "Plan speculation: Chronos r per strategy, replication (p, r, keep|kill)."),
    "nodes": ("hedge.nodes.cli:nodes", "Node performance: ranking, weak-node prediction, blacklisting."),
    "traces": ("hedge.traces.cli:traces", "Read traces and report straggler statistics."),
    "reproduce": ("hedge.reproduce.cli:reproduce", "Re-run the published results hedge implements, side by side with the papers' figures."),
    "serve": ("hedge.server.cli:serve", "Run the control plane the Hadoop shim asks for speculation decisions."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and name not in self.commands:
            module_name, attr = COMMANDS[name][0].split(":")
            self.add_command(getattr(importlib.import_module(module_name), attr), name)
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            repeated = repeated_option(command, rest)
            if repeated:  # the hint names the subcommand's --help
                raise click.UsageError(repeated, ctx=click.Context(command, ctx, name))
        return name, command, rest

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        rows += [(n, c.get_short_help_str()) for n, c in sorted(self.commands.items())
                 if n not in COMMANDS]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def repeated_option(command: click.Command, args: list[str]) -> str | None:
    """Why ``args`` are refused if they give one of ``command``'s one-value options twice
    (click would keep the last value and drop the others without a word), else None. A
    group's arguments are read up to its subcommand's name, then that subcommand's."""
    takes: dict[str, click.Option] = {}  # every option name that takes a value
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag and not param.count:
            takes.update((name, param) for name in param.opts)
    given: dict[str, list[str]] = {}  # option -> "name value" as given, in order
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return None
        name, inline, value = token.partition("=")
        option = takes.get(name) if token.startswith("--") else takes.get(token)
        if option is not None:
            if not inline:
                name, value = token, " ".join(args[i + 1:i + 1 + option.nargs])
                i += option.nargs
            uses = given.setdefault(option.name or name, [])
            uses.append(f"{name} {value}")
            if not option.multiple and len(uses) > 1:
                return (f"{'/'.join(option.opts)} given more than once ({', '.join(uses)}): "
                        "it takes one value, and only the last would be used")
        elif isinstance(command, click.Group) and not token.startswith("-"):
            sub = command.commands.get(token)
            return repeated_option(sub, args[i + 1:]) if sub is not None else None
        i += 1
    return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hedge")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """hedge: straggler mitigation for Hadoop YARN MapReduce."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning every error into one line and an exit status."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        cli.main(args=args, prog_name="hedge", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("hedge: aborted", err=True)
        return 130
    except click.UsageError as exc:
        # one line, like every other bad input (click's own form is usage, hint and error
        # on four lines); --help still shows the usage
        command = exc.ctx.command_path if exc.ctx else "hedge"
        message = " ".join(exc.format_message().split())
        click.echo(f"hedge: error: {message} (see '{command} --help')", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except HedgeError as exc:
        if debug:
            raise
        # one line even when a library's message spans several (configparser's does)
        click.echo(f"hedge: error: {' '.join(str(exc).split(chr(10)))}", err=True)
        return 2
    except OSError as exc:
        if debug:
            raise
        click.echo(f"hedge: error: {exc.filename or ''}: {exc.strerror or exc}", err=True)
        return 2
    except KeyboardInterrupt:
        click.echo("hedge: interrupted", err=True)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence for users
        if debug:
            raise
        click.echo(
            f"hedge: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the "
            "traceback and report it)",
            err=True,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
