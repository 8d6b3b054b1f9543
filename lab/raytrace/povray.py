"""Running POV-Ray: the camera block, a scene file, and the render itself.

POV-Ray's frame is left-handed with y up; the board frame is (x, y, z-up). A board point
(x, y, z) is `<x, z, y>` in POV-Ray. The camera is given as explicit location, direction,
right and up vectors so that POV-Ray's pixel (i, j) is the ray through OpenCV's pixel
(i, j) of `Camera.matrix` (pixel centres at integers).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import cv2
import numpy as np

from lab.raytrace.camera import Camera

Array = np.ndarray


class RenderError(RuntimeError):
    """POV-Ray is missing or failed on a scene."""


def vec(p: Array | tuple[float, float, float]) -> str:
    """A board-frame point or direction as a POV-Ray vector."""
    x, y, z = (float(v) for v in p)
    return f"<{x:.6f}, {z:.6f}, {y:.6f}>"


def camera_block(camera: Camera, width: int, height: int) -> str:
    """The POV-Ray camera for `camera`'s pose and focal length on a `width` x `height` canvas
    whose principal point is its centre."""
    right, down, forward = camera.axes()
    f = camera.focal_px
    return (
        "camera { perspective\n"
        f"  location {vec(camera.position())}\n"
        f"  direction {vec(forward)}\n"
        f"  right {vec(right * (width / f))}\n"
        f"  up {vec(-down * (height / f))}\n"
        "}\n"
    )


def povray_binary() -> str:
    found = shutil.which("povray")
    if found is None:
        raise RenderError(
            "POV-Ray is not installed: on Debian, `apt-get install povray` "
            "(scripts/lab installs it)")
    return found


def render_scene(text: str, width: int, height: int, *, antialias: float | None = 0.3,
                 quality: int = 9, threads: int = 1, assets: dict[str, bytes] | None = None,
                 region: tuple[int, int, int, int] | None = None,
                 timeout_s: float = 900.0) -> Array:
    """Render POV-Ray scene text to a BGR uint8 image of `width` x `height`.

    `assets` are files the scene refers to by name (textures), written beside it. With
    `region` (x0, y0, x1, y1: pixels, the end excluded) only that box is traced; the rest of
    the image is black.
    """
    binary = povray_binary()
    with tempfile.TemporaryDirectory(prefix="ponte-pov-") as tmp:
        folder = Path(tmp)
        for name, data in (assets or {}).items():
            (folder / name).write_bytes(data)
        (folder / "scene.pov").write_text(text, encoding="utf-8")
        args = [binary, "-D", "-V", "-GA", f"+W{width}", f"+H{height}", f"+Q{quality}",
                f"+WT{threads}", "+FN8", "Output_Alpha=off", "+Iscene.pov", "+Oout.png"]
        args.append(f"+A{antialias} +AM2 +R2" if antialias else "-A")
        if region is not None:
            # POV-Ray counts rows and columns from 1, both ends included; 0.0 is the edge (a
            # value of 1 or less would be read as a share of the image).
            x0, y0, x1, y1 = region
            args.append(f"+SC{x0 + 1 if x0 > 0 else 0.0} +EC{x1} "
                        f"+SR{y0 + 1 if y0 > 0 else 0.0} +ER{y1}")
        args = [a for part in args for a in part.split(" ")]
        env = dict(os.environ, HOME=tmp)
        done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
        out = folder / "out.png"
        if done.returncode != 0 or not out.exists():
            tail = "\n".join(done.stderr.strip().splitlines()[-8:])
            raise RenderError(f"POV-Ray failed (exit {done.returncode}): {tail}")
        image = cv2.imread(str(out), cv2.IMREAD_COLOR)
    if image is None or image.shape[:2] != (height, width):
        raise RenderError("POV-Ray wrote no readable image of the asked size")
    return np.asarray(image)
