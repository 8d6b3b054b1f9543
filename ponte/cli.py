"""The `ponte` command: one entry point, one module per subcommand under `ponte.commands`.

Each command module has `register(subparsers)`, which adds its parser(s) and sets
`handler` to a function `(args) -> int` (the exit status). Errors a person can act on are
raised as `CommandError` and printed as one line, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from ponte import __version__

#: The modules that make up the command, in the order `ponte --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "ponte.commands.referee",
    "ponte.commands.demo",
    "ponte.commands.live",
    "ponte.commands.bench",
    "ponte.commands.leds",
    "ponte.commands.vision",
)


EXIT_STATUS = """\
exit status, the same for every command:
  0    done: every record legal, every image read, the game recorded
  1    a finding: an illegal move, or a Result tag the moves do not give (referee)
  2    input that cannot be used, said in one line: a missing or unreadable file, a
       record that does not parse, an image with no board in it, a video in which the
       board was never found, a wrong option
  130  interrupted (Ctrl-C)
"""


class CommandError(Exception):
    """A failure a person can act on; its message is printed as it is."""


LAB_MISSING = (
    "the lab (scene generators, training, evaluation and benchmarks) is not installed: it "
    "runs from a source checkout; install the checkout with "
    "`pip install -e '.[lab]' --config-settings editable_mode=compat`"
)


def lab_module(name: str) -> ModuleType:
    """The `lab` module `name`, imported now; a CommandError saying how to install the lab
    when it is missing (the runtime wheel leaves it out)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (exc.name == "lab" or exc.name.startswith("lab.")):
            raise CommandError(LAB_MISSING) from None
        raise


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ponte",
        description="Tabletop assistant for Ponte del Diavolo.",
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ponte {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = handler(args)
    except CommandError as exc:
        print(f"ponte {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ponte {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return status
