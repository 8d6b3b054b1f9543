"""The README's figures are the results files' (made by `scripts/readme_tables.py`), and the
README stays a manual of a few pages."""

from __future__ import annotations

import csv
import difflib
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_tables",
                                                  ROOT / "scripts" / "readme_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tables = _script()


def test_the_readme_tables_are_those_the_results_files_make() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    wanted = tables.rewrite(readme, tables.tables(ROOT / "results"))
    diff = "\n".join(difflib.unified_diff(readme.splitlines(), wanted.splitlines(),
                                          "README.md", "made from results/", lineterm=""))
    assert readme == wanted, f"run python scripts/readme_tables.py\n{diff}"


@pytest.fixture
def copies(tmp_path: Path) -> tuple[Path, Path]:
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results", results)
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    return readme, results


def _change_total(path: Path, column: str, value: str) -> None:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    fields = list(rows[0])
    for row in rows:
        if row["setup"] == "all" and row.get("mode", "tracker") == "tracker":
            row[column] = value
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fields)
        writer.writeheader()
        writer.writerows(rows)


def test_a_changed_measurement_makes_the_check_fail_until_the_tables_are_made_again(
    copies: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    readme, results = copies
    _change_total(results / "vision_eval_seed7.csv", "cells_wrong", "4321")
    _change_total(results / "games_eval.csv", "delay_max_s", "9.99")
    arguments = ["--readme", str(readme), "--results", str(results)]
    assert tables.main([*arguments, "--check"]) == 1
    assert "differ" in capsys.readouterr().err
    assert tables.main(arguments) == 0
    made = readme.read_text(encoding="utf-8")
    wrong = cells = 0
    for path in results.glob("vision_eval*.csv"):
        with path.open(newline="") as handle:
            (total,) = [r for r in csv.DictReader(handle)
                        if r["setup"] == "all" and r["mode"] == "tracker"]
        wrong, cells = wrong + int(total["cells_wrong"]), cells + int(total["cells"])
    assert wrong > 4321 and f"{wrong:,} of {cells:,}" in made and "9.99 s" in made
    assert tables.main([*arguments, "--check"]) == 0
    outside = made.split(tables.BEGIN)[0] + made.split(tables.END)[1]
    original = (ROOT / "README.md").read_text(encoding="utf-8")
    assert outside == original.split(tables.BEGIN)[0] + original.split(tables.END)[1]


def test_a_readme_without_its_markers_is_refused_with_a_message(
    copies: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    readme, results = copies
    readme.write_text("# no tables here\n", encoding="utf-8")
    assert tables.main(["--readme", str(readme), "--results", str(results)]) == 2
    assert "marker" in capsys.readouterr().err
    assert readme.read_text(encoding="utf-8") == "# no tables here\n"


def test_the_readme_is_a_short_manual_with_its_picture() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 15_500
    assert "](docs/game-page.png)" in readme
    assert (ROOT / "docs" / "game-page.png").stat().st_size > 10_000
