"""The runtime stands without the lab: every runtime module imports with `lab` missing, the
wheel leaves the lab out, and the commands backed by the lab say how to install it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ("contracts", "referee", "vision", "calibration", "firmware_bridge", "web", "ponte")

_WITHOUT_LAB = "import sys; sys.modules['lab'] = None\n"
"""Python run first in a child process: from then on `import lab...` fails, as it does where
only the runtime wheel is installed."""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT_LAB + code], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_every_runtime_module_imports_without_the_lab() -> None:
    code = f"""
import importlib, pkgutil
names = []
for top in {RUNTIME!r}:
    package = importlib.import_module(top)
    names.append(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        if not info.name.endswith(".__main__"):
            importlib.import_module(info.name)
            names.append(info.name)
print(len(names))
"""
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 60  # every module was walked, not just the packages


def test_the_wheel_leaves_the_lab_out() -> None:
    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]["find"]
    packages = find_packages(str(ROOT), include=found["include"], exclude=found["exclude"])
    assert not [p for p in packages if p == "lab" or p.startswith("lab.")]
    assert set(RUNTIME) <= set(packages)


@pytest.mark.parametrize("argv", [
    ["eval", "vision", "--count", "1", "--out", "OUT/vision.csv"],
    ["eval", "games", "--out", "OUT/games.csv"],
    ["eval", "scene", "1", "overhead-cream-red", "0", "--out", "OUT/scene"],
    ["bench", "referee", "--quick"],
])
def test_a_lab_command_without_the_lab_says_how_to_install_it(
    argv: list[str], tmp_path: Path
) -> None:
    argv = [a.replace("OUT", str(tmp_path)) for a in argv]
    done = _python(f"from ponte.cli import main; sys.exit(main({argv!r}))")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"ponte {argv[0]}: the lab ")
    assert "pip install -e '.[lab]' --config-settings editable_mode=compat" in done.stderr
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_the_runtime_commands_work_without_the_lab() -> None:
    done = _python("from ponte.cli import main; sys.exit(main(['referee', '--help']))")
    assert done.returncode == 0, done.stderr
