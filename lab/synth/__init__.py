"""Synthetic scenes of a Ponte del Diavolo board with ground truth, for tests and evaluation.

`render(SceneSpec) -> Frame` draws one photo-like frame (perspective, tiles with height and
jitter, arched bridges, lighting, shadows, hands, lens distortion, noise, JPEG);
`random_spec(rng, setup)` samples a scene from one of the named `SETUPS`;
`render_sequence(...)` makes a game video (a hand places each move, the board settles);
`python -m lab.synth.dataset` writes an evaluation set and `python -m lab.synth.video`
a game video with per-frame truth. Imports numpy and OpenCV only.
"""

from __future__ import annotations

from lab.synth.position import (
    cell_name,
    parse_cell,
    random_game,
    random_position,
    validate_position,
)
from lab.synth.render import Frame, a1_margin_px, render
from lab.synth.sequence import (
    CameraBump,
    Phase,
    SequenceTiming,
    SequenceTruth,
    render_sequence,
    write_video,
)
from lab.synth.setups import SETUPS, Setup, random_spec
from lab.synth.spec import (
    BoardLook,
    BridgeLook,
    CameraSpec,
    Effects,
    HandSpec,
    InvalidScene,
    Lighting,
    LooseTile,
    MarkerSpec,
    Prop,
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
    "MarkerSpec",
    "Phase",
    "Prop",
    "SETUPS",
    "SceneSpec",
    "SequenceTiming",
    "SequenceTruth",
    "Setup",
    "TableKind",
    "TableLook",
    "TileLook",
    "a1_margin_px",
    "cell_name",
    "parse_cell",
    "random_game",
    "random_position",
    "random_spec",
    "render",
    "render_sequence",
    "validate_position",
    "write_video",
]
