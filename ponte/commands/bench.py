"""`ponte bench TARGET`: speed measurements quoted in the README (not tests).

Each target is a module with `add_arguments(parser)` (optional) and `run(args) -> int`,
imported only when that target is asked for.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ponte.cli import lab_module

#: bench target -> module that measures it.
BENCH_TARGETS: dict[str, str] = {
    "referee": "lab.bench.referee",
    "leds": "lab.bench.leds",
    "vision": "lab.bench.vision",
    "live": "lab.bench.live",
    "web": "lab.bench.web",
}

#: bench target -> what it measures (its line in `ponte bench --help`).
BENCH_HELP: dict[str, str] = {
    "referee": "the referee's speed: a turn's legality check, listing the legal moves",
    "leds": "the LED controller's frame-to-acknowledgement time (firmware in simavr)",
    "vision": "milliseconds per 1280 x 720 camera frame read, on one core",
    "live": "the live loop's settle-to-verdict latency and CPU use at 30 fps",
    "web": "the web page's speed in headless Chromium",
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("bench", help="measure speed (figures quoted in the README)")
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    for name, module_name in BENCH_TARGETS.items():
        sub = targets.add_parser(name, help=BENCH_HELP[name])
        sub.set_defaults(handler=_runner(module_name), bench_module=module_name)
        sub.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
        sub.add_argument("--part", help="only this part of the benchmark (web: crowd, browser)")
        if name == "vision":
            sub.add_argument("--out", type=Path, help="also write the figures as CSV here "
                             "(the README's speed table: results/bench_vision.csv)")


def _runner(module_name: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        module = lab_module(module_name)
        status: int = module.run(args)
        return status

    return run
