"""Building the firmware and running it in simavr: for the tests and `ponte bench leds`.

`build(build_dir)` runs the firmware's Makefile (avr-gcc for the firmware, gcc against
Debian's libsimavr for the harness `ponte-sim`); `Emulator` starts the harness, which prints
the pseudo-terminal its emulated UART is on, and drives its button and WS2812 probe through
the harness's stdin commands (see `firmware/sim/harness.c`).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

FIRMWARE_DIR = Path(__file__).with_name("firmware")


class SimulatorError(RuntimeError):
    """The firmware or the harness could not be built or started."""


@dataclass(frozen=True)
class Build:
    """The built firmware ELF and the simavr harness."""

    firmware: Path
    harness: Path


def missing_tools() -> list[str]:
    """Build tools not on this machine (scripts/test installs them on Debian)."""
    tools = ["make", "avr-gcc", "avr-objcopy", "gcc", "pkg-config"]
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if (
        not missing
        and subprocess.run(
            ["pkg-config", "--exists", "simavr"], capture_output=True, check=False
        ).returncode
    ):
        missing.append("libsimavr-dev (pkg-config simavr)")
    return missing


def build(build_dir: Path, **make_vars: str | int) -> Build:
    """Builds firmware and harness into `build_dir`; `make_vars` such as LED_COUNT=100."""
    missing = missing_tools()
    if missing:
        raise SimulatorError(f"missing build tools: {', '.join(missing)}")
    build_dir.mkdir(parents=True, exist_ok=True)
    args = ["make", "-s", "-C", str(FIRMWARE_DIR), f"BUILD={build_dir.resolve()}", "all", "sim"]
    args += [f"{name}={value}" for name, value in make_vars.items()]
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode:
        raise SimulatorError(f"building the firmware failed:\n{result.stdout}{result.stderr}")
    return Build(build_dir / "ponte-leds.elf", build_dir / "ponte-sim")


class Emulator:
    """One running emulated controller. `url` is what pyserial opens: the `link` path if
    one was given (it survives a restart), else the pty itself."""

    def __init__(self, built: Build, link: Path | None = None) -> None:
        self.built = built
        self.link = link
        self.pty = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._diagnostics = ""
        self._buffer = b""

    @property
    def url(self) -> str:
        return str(self.link) if self.link is not None else self.pty

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 10.0) -> Emulator:
        self.stop()
        args = [str(self.built.harness), str(self.built.firmware)]
        if self.link is not None:
            args += ["--link", str(self.link)]
        self._buffer = b""
        # stderr to a file, not a pipe: nobody reads it while all is well, and a full pipe
        # would stall the emulator
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0
        )
        try:
            self.pty = self._expect("PTY ", timeout)
        except SimulatorError:
            self.stop()
            raise
        return self

    def _readline(self, timeout: float) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SimulatorError("the emulator did not answer in time")
            ready, _, _ = select.select([self._proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self._proc.stdout.fileno(), 65536)
                if not chunk:
                    raise SimulatorError(f"the emulator stopped: {self.diagnostics()}")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("ascii", "replace")

    def diagnostics(self) -> str:
        """What the harness wrote on stderr (kept after `stop()`)."""
        if self._stderr is not None:
            self._stderr.seek(0)
            self._diagnostics = self._stderr.read().decode("utf-8", "replace").strip()
        return self._diagnostics

    def _expect(self, prefix: str, timeout: float) -> str:
        """The rest of the first stdout line starting with `prefix` (simavr prints its own
        lines too)."""
        while True:
            line = self._readline(timeout)
            if line.startswith(prefix):
                return line[len(prefix) :]

    def _command(self, text: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(text.encode() + b"\n")

    def press(self, milliseconds: int) -> None:
        """Holds the button down for `milliseconds` of emulated time."""
        self._command(f"press {milliseconds}")
        self._expect("OK press", 5.0)

    def strip(self) -> bytes:
        """The last complete WS2812 transmission seen on the data pin (G, R, B per LED)."""
        self._command("strip")
        _, hex_bytes = (self._expect("STRIP ", 5.0).split(" ") + [""])[:2]
        return bytes.fromhex(hex_bytes)

    def stop(self) -> None:
        if self._proc is None:
            return
        if self._proc.poll() is None:
            try:
                self._command("quit")
                self._proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()
        self._proc = None
        self.diagnostics()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
