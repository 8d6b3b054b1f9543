"""Procedural textures (table, printed board) for synthetic scenes; pure numpy + OpenCV."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from lab.synth.spec import BoardLook, TableKind, TableLook

Array = npt.NDArray[Any]

TABLE_TEXELS = 512
"""Side of the (periodic) table texture in texels."""
TABLE_TEXEL_CELLS = 0.06
"""Size of one table texel on the table, in cells (the texture repeats every ~31 cells)."""
BOARD_PX_PER_CELL = 48
"""Resolution of the printed-board texture."""


def periodic_noise(
    rng: np.random.Generator, shape: tuple[int, int], scale: tuple[float, float]
) -> Array:
    """Smooth noise that tiles seamlessly (FFT-filtered white noise), unit std.

    `scale` is the feature size in texels along (rows, columns).
    """
    white = rng.standard_normal(shape)
    fy = np.fft.fftfreq(shape[0])[:, None]
    fx = np.fft.fftfreq(shape[1])[None, :]
    gain = np.exp(-2.0 * (np.pi**2) * ((fy * scale[0]) ** 2 + (fx * scale[1]) ** 2))
    field = np.real(np.fft.ifft2(np.fft.fft2(white) * gain))
    field -= field.mean()
    std = field.std()
    return np.asarray(field / std if std > 0 else field, np.float32)


TEXTURE_VARIANTS = 16
"""Seeds are folded onto this many texture patterns (cached), colours are applied per scene."""


@lru_cache(maxsize=3 * TEXTURE_VARIANTS)
def _table_pattern(kind: TableKind, variant: int) -> Array:
    """Brightness pattern (unit scale, zero mean-ish) of a periodic table texture."""
    rng = np.random.default_rng([variant, 11])
    n = TABLE_TEXELS
    v = np.arange(n, dtype=np.float32)[:, None]
    u = np.arange(n, dtype=np.float32)[None, :]
    fine = periodic_noise(rng, (n, n), (1.0, 1.0))
    if kind == TableKind.WOOD:
        warp = periodic_noise(rng, (n, n), (40.0, 120.0))
        streak = periodic_noise(rng, (n, n), (1.5, 60.0))
        planks = 4
        plank = np.floor(v / (n / planks)).astype(np.int32) % planks
        plank_shift = rng.uniform(-0.6, 0.6, planks).astype(np.float32)[plank]
        rings = np.sin(2 * np.pi * (v * 9.0 / n + 0.8 * warp + plank_shift * 3.0))
        value = 0.35 * rings + 0.45 * streak + 0.12 * fine + 0.5 * plank_shift
        seam = (np.abs((v % (n / planks)) - 0.5) < 1.0).astype(np.float32)
        value = value - 2.5 * seam
    elif kind == TableKind.CLOTH:
        weave = np.sin(2 * np.pi * u / 4.0) * np.sin(2 * np.pi * v / 4.0)
        value = 0.35 * weave + 0.4 * fine + 0.5 * periodic_noise(rng, (n, n), (60.0, 60.0))
    else:
        value = 0.15 * fine + 0.8 * periodic_noise(rng, (n, n), (80.0, 80.0))
    out: Array = np.clip(value, -3.0, 3.0).astype(np.float32)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=16)
def table_texture(look: TableLook, seed: int) -> Array:
    """A periodic BGR uint8 table texture (TABLE_TEXELS square)."""
    pattern = _table_pattern(look.kind, seed % TEXTURE_VARIANTS)
    shade = 1.0 + look.contrast * 0.5 * pattern
    tex = np.array(look.color, np.float32)[None, None, :] * shade[..., None]
    return np.clip(tex, 0, 255).astype(np.uint8)


PAPER_TEXELS = 640


@lru_cache(maxsize=TEXTURE_VARIANTS)
def _paper_pattern(variant: int) -> Array:
    """Periodic (2, PAPER_TEXELS, PAPER_TEXELS): printed-colour blotches, paper grain."""
    rng = np.random.default_rng([variant, 13])
    p = BOARD_PX_PER_CELL
    shape = (PAPER_TEXELS, PAPER_TEXELS)
    out = np.stack(
        [periodic_noise(rng, shape, (p * 1.5, p * 1.5)), periodic_noise(rng, shape, (0.8, 0.8))]
    )
    out.setflags(write=False)
    return out


@lru_cache(maxsize=16)
def board_texture(look: BoardLook, size: int, seed: int) -> tuple[Array, float]:
    """The printed board as BGRA uint8 (alpha 255), and the border width (cells) it has.

    Texel centre (u, v) lies at board point x = (u + 0.5) / P - border,
    y = (S - v - 0.5) / P - border, with P = BOARD_PX_PER_CELL and S the texture side.
    """
    p = BOARD_PX_PER_CELL
    side = int(round((size + 2 * look.border_width) * p))
    border = (side / p - size) / 2.0
    tex = np.empty((side, side, 3), np.float32)
    tex[:] = np.array(look.border_color, np.float32)
    lo = border * p
    hi = (border + size) * p
    inner = slice(int(round(lo)), int(round(hi)))
    tex[inner, inner] = np.array(look.board_color, np.float32)
    pattern = _paper_pattern(seed % TEXTURE_VARIANTS)
    reps = side // PAPER_TEXELS + 1
    if reps > 1:
        pattern = np.tile(pattern, (1, reps, reps))
    blotch, paper = pattern[:, :side, :side]
    tex *= (1.0 + look.mottling * blotch + 0.015 * paper)[..., None]
    color = tuple(float(c) for c in look.grid_color)
    half = max(look.line_width * p / 2.0, 0.6)
    for i in range(size + 1):
        w = half * (1.6 if i in (0, size) else 1.0)
        pos = lo + i * p - 0.5
        for quad in (
            [
                (pos - w, lo - 0.5 - w),
                (pos + w, lo - 0.5 - w),
                (pos + w, hi - 0.5 + w),
                (pos - w, hi - 0.5 + w),
            ],
            [
                (lo - 0.5 - w, pos - w),
                (hi - 0.5 + w, pos - w),
                (hi - 0.5 + w, pos + w),
                (lo - 0.5 - w, pos + w),
            ],
        ):
            pts = np.round(np.array(quad) * 16).astype(np.int32)
            cv2.fillConvexPoly(tex, pts, color, cv2.LINE_AA, 4)
    specks = np.random.default_rng([seed, 31])
    for _ in range(int(specks.integers(10, 60))):
        centre = specks.uniform(0, side, 2)
        radius = specks.uniform(0.4, 1.6)
        shade = float(specks.choice([0.55, 1.35]))
        colour = tuple(float(c) * shade for c in look.board_color)
        cv2.circle(
            tex,
            (int(centre[0] * 16), int(centre[1] * 16)),
            int(radius * 16),
            colour,
            -1,
            cv2.LINE_AA,
            4,
        )
    frame_color = tuple(float(c) for c in look.frame_color)
    for k in range(look.frame_lines):
        gap = border * p * (0.35 + 0.25 * k)
        _square_outline(tex, lo - 0.5 - gap, hi - 0.5 + gap, half * 0.8, frame_color)
    bgra = np.full((side, side, 4), 255, np.uint8)
    bgra[..., :3] = np.clip(tex, 0, 255)
    return bgra, border


def _square_outline(
    tex: Array, lo: float, hi: float, half: float, color: tuple[float, ...]
) -> None:
    """A thin square outline with corners (lo, lo) and (hi, hi), anti-aliased."""
    for quad in (
        [
            (lo - half, lo - half),
            (hi + half, lo - half),
            (hi + half, lo + half),
            (lo - half, lo + half),
        ],
        [
            (lo - half, hi - half),
            (hi + half, hi - half),
            (hi + half, hi + half),
            (lo - half, hi + half),
        ],
        [
            (lo - half, lo - half),
            (lo + half, lo - half),
            (lo + half, hi + half),
            (lo - half, hi + half),
        ],
        [
            (hi - half, lo - half),
            (hi + half, lo - half),
            (hi + half, hi + half),
            (hi - half, hi + half),
        ],
    ):
        pts = np.round(np.array(quad) * 16).astype(np.int32)
        cv2.fillConvexPoly(tex, pts, color, cv2.LINE_AA, 4)


GRAIN_TEXELS_PER_CELL = 64
"""Resolution of the tile-top grain pattern (it repeats every 4 cells)."""


@lru_cache(maxsize=TEXTURE_VARIANTS)
def _grain_pattern(variant: int) -> Array:
    rng = np.random.default_rng([variant, 19])
    n = 4 * GRAIN_TEXELS_PER_CELL
    streaks = periodic_noise(rng, (n, n), (0.7, 14.0))
    blotch = periodic_noise(rng, (n, n), (10.0, 10.0))
    out = np.clip(0.8 * streaks + 0.5 * blotch, -3.0, 3.0).astype(np.float32)
    out.setflags(write=False)
    return out


def tile_grain(seed: int) -> Array:
    """Periodic zero-mean grain (wood/paint) for tile tops, about unit amplitude."""
    return _grain_pattern(seed % TEXTURE_VARIANTS)


@lru_cache(maxsize=1)
def skin_pattern() -> Array:
    """Periodic blotchy pattern (image space, 128 px) for skin and cloth, unit amplitude."""
    rng = np.random.default_rng(29)
    shape = (128, 128)
    out = np.clip(
        0.7 * periodic_noise(rng, shape, (6.0, 6.0)) + 0.4 * periodic_noise(rng, shape, (1.2, 1.2)),
        -3.0,
        3.0,
    ).astype(np.float32)
    out.setflags(write=False)
    return out
