"""Synthetic scenes of a Ponte del Diavolo board with ground truth, for tests and evaluation.

`render(SceneSpec) -> Frame` draws one photo-like frame (perspective, tiles with height and
jitter, arched bridges, lighting, shadows, hands, lens distortion, noise, JPEG);
`random_spec(rng, setup)` samples a scene from one of the named `SETUPS`;
`render_sequence(...)` makes a game video (a hand places each move, the board settles);
`python -m vision.synth.dataset` writes an evaluation set. Imports numpy and OpenCV only.
"""

from __future__ import annotations

from vision.synth.position import cell_name, parse_cell, random_position, validate_position
from vision.synth.render import Frame, render
from vision.synth.sequence import (
    CameraBump,
    Phase,
    SequenceTiming,
    SequenceTruth,
    render_sequence,
    write_video,
)
from vision.synth.setups import SETUPS, Setup, random_spec
from vision.synth.spec import (
    BoardLook,
    BridgeLook,
    CameraSpec,
    Effects,
    HandSpec,
    InvalidScene,
    Lighting,
    LooseTile,
    SceneSpec,
    TableKind,
    TableLook,
    TileLook,
)

__all__ = [
    "BoardLook",
    "BridgeLook",
    "CameraBump",
    "CameraSpec",
    "Effects",
    "Frame",
    "HandSpec",
    "InvalidScene",
    "Lighting",
    "LooseTile",
    "Phase",
    "SETUPS",
    "SceneSpec",
    "SequenceTiming",
    "SequenceTruth",
    "Setup",
    "TableKind",
    "TableLook",
    "TileLook",
    "cell_name",
    "parse_cell",
    "random_position",
    "random_spec",
    "render",
    "render_sequence",
    "validate_position",
    "write_video",
]
