"""`ponte demo`: the README's main job, on bundled material, with no camera needed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "games"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run the assistant on a bundled example")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ponte.commands.referee import check_files

    records = sorted(EXAMPLES.glob("*.pdd"))
    return check_files([str(p) for p in records], as_json=False)
