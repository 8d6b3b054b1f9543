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


class CommandError(Exception):
    """A failure a person can act on; its message is printed as it is."""


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: give 1-65535 (0: any free)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ponte",
        description="Tabletop assistant for Ponte del Diavolo.",
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
