"""`scripts/setup.sh`: the virtual environment on a machine without python3-venv, with
stand-ins for Python, dpkg and apt on the PATH that log what they are asked."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"

FAKE_PYTHON = r"""#!/usr/bin/env bash
echo "python $*" >> "$FAKE/log"
if [ "$1" = "-c" ] && [[ "$2" == *ensurepip* ]]; then [ -f "$FAKE/venv-module" ]; exit; fi
if [ "$1" = "-c" ]; then echo "python3.11-venv"; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    [ -f "$FAKE/venv-module" ] || { echo "ensurepip is not available" >&2; exit 1; }
    target="${@: -1}"
    mkdir -p "$target/bin"
    touch "$target/pyvenv.cfg"
    printf '#!/usr/bin/env bash\necho "venv-python $*" >> "$FAKE/log"\n' > "$target/bin/python"
    chmod +x "$target/bin/python"
    exit 0
fi
exit 2
"""

FAKE_DPKG_QUERY = r"""#!/usr/bin/env bash
pkg="${@: -1}"
[ -f "$FAKE/installed-$pkg" ] && printf 'install ok installed'
exit 0
"""

FAKE_APT_CACHE = r"""#!/usr/bin/env bash
[ "$1" = "show" ] && [ -f "$FAKE/known-$2" ]
"""

FAKE_APT_GET = r"""#!/usr/bin/env bash
echo "apt-get $*" >> "$FAKE/log"
if [[ " $* " == *" install "* ]]; then
    for pkg in "$@"; do
        case "$pkg" in -*|install) ;; *) touch "$FAKE/installed-$pkg" "$FAKE/venv-module" ;; esac
    done
fi
"""


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    folder = tmp_path / "fake"
    folder.mkdir()
    for name, text in (("python3", FAKE_PYTHON), ("dpkg-query", FAKE_DPKG_QUERY),
                       ("apt-cache", FAKE_APT_CACHE), ("apt-get", FAKE_APT_GET),
                       ("sudo", '#!/usr/bin/env bash\nexec "$@"\n')):
        path = folder / name
        path.write_text(text)
        path.chmod(0o755)
    return folder


def _setup(fake: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "FAKE": str(fake),
           "PYTHON": str(fake / "python3"), "PONTE_VENV": str(venv)}
    return subprocess.run(["bash", "-c", f'source "{SETUP}" && ensure_venv none'],
                          env=env, capture_output=True, text=True, timeout=60)


def _log(fake: Path) -> list[str]:
    return (fake / "log").read_text().splitlines()


@pytest.mark.parametrize(("known", "package"), [(True, "python3.11-venv"),
                                                (False, "python3-venv")])
def test_python3_venv_is_installed_where_missing_and_only_once(
    fake: Path, tmp_path: Path, known: bool, package: str
) -> None:
    if known:
        (fake / "known-python3.11-venv").touch()
    venv = tmp_path / "venv"
    first = _setup(fake, venv)
    assert first.returncode == 0, first.stderr
    installs = [line for line in _log(fake) if line.startswith("apt-get") and "install" in line]
    assert len(installs) == 1 and installs[0].split()[-1] == package
    assert (venv / "bin" / "python").is_file()
    assert any(line.startswith("venv-python -m pip install") for line in _log(fake))
    (fake / "log").write_text("")
    second = _setup(fake, venv)
    assert second.returncode == 0, second.stderr
    assert not [line for line in _log(fake) if line.startswith(("apt-get", "python -m venv"))]


def test_a_venv_left_without_pip_is_made_again(fake: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").touch()
    (venv / "bin" / "python").write_text("#!/usr/bin/env bash\nexit 1\n")  # no pip in it
    (venv / "bin" / "python").chmod(0o755)
    result = _setup(fake, venv)
    assert result.returncode == 0, result.stderr
    assert f"python -m venv --clear {venv}" in _log(fake)


def test_when_the_package_cannot_be_installed_it_says_what_to_install(
    fake: Path, tmp_path: Path
) -> None:
    (fake / "apt-get").write_text('#!/usr/bin/env bash\necho "apt-get $*" >> "$FAKE/log"\n'
                                  '[ "$1" = "update" ] || { echo "E: Unable to locate" >&2; '
                                  'exit 100; }\n')
    result = _setup(fake, tmp_path / "venv")
    assert result.returncode != 0
    assert "installing Debian packages: python3-venv" in result.stderr
    assert not (tmp_path / "venv").exists()
