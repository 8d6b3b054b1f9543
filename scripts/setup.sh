#!/usr/bin/env bash
# Shared set-up for scripts/demo and scripts/test: Debian packages, a virtual environment,
# and the project installed into it. Safe to run any number of times; it only does what
# is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PONTE_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"

_as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "setup: need root (or sudo) to install Debian packages: $*" >&2; return 1
    fi
}

# ensure_debian_packages PKG...: installs the packages that are not installed yet.
ensure_debian_packages() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null; then
        echo "setup: these Debian packages are needed but apt-get is missing: ${missing[*]}" >&2
        return 1
    fi
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    _as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive _as_root apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# _venv_works: whether $PYTHON can make a virtual environment with pip in it (Debian and
# Ubuntu ship `venv` and `ensurepip` in a package of their own, python3-venv).
_venv_works() {
    "$PYTHON" -c "import ensurepip, venv" >/dev/null 2>&1
}

# ensure_venv_module: installs python3-venv (the package for this very Python version,
# python3.X-venv, where the system knows it) if $PYTHON cannot make a virtual environment.
ensure_venv_module() {
    _venv_works && return 0
    local versioned
    versioned="$("$PYTHON" -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])')"
    if command -v apt-cache >/dev/null && apt-cache show "$versioned" >/dev/null 2>&1; then
        ensure_debian_packages "$versioned"
    else
        ensure_debian_packages python3-venv
    fi
    if ! _venv_works; then
        echo "setup: $PYTHON still cannot make a virtual environment (import ensurepip" \
             "fails); install its venv package ($versioned or python3-venv)" >&2
        return 1
    fi
}

# ensure_venv EXTRAS: a virtual environment with the project installed (editable).
ensure_venv() {
    local extras="$1"
    # one left without pip by an earlier attempt (before python3-venv was there) is remade
    if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1
    then
        ensure_venv_module
        local clear=()
        [ -f "$VENV/pyvenv.cfg" ] && clear=(--clear)  # only ever a virtual environment
        echo "setup: creating virtual environment in $VENV" >&2
        "$PYTHON" -m venv "${clear[@]}" "$VENV"
    fi
    local stamp="$VENV/.ponte-setup-$extras"
    local want
    want="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "setup: installing the project and its Python packages" >&2
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
        if [ -n "$extras" ] && [ "$extras" != "none" ]; then
            # compat: the checkout itself on the path, so the lab (not in the wheel) imports
            "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[$extras]" \
                --config-settings editable_mode=compat
        else
            "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT"
        fi
        echo "$want" > "$stamp"
    fi
}
