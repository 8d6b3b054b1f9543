"""The referee: the complete rules of Ponte del Diavolo as pure functions and values.

Pure: no OpenCV, Flask, serial, SQLite or file I/O (records are read from and written to
handles the caller opens). Imports nothing but the standard library.
"""

from referee.cells import SIZES, BridgeShape, Cell, Colour, bridge_shape, cells_under, geometry
from referee.game import Flag, Game, Outcome, PlayedMove, Termination, round_of
from referee.moves import (
    Bridge,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Pass,
    Swap,
    Tiles,
    parse_move,
)
from referee.position import BRIDGE_POOL, TILES_PER_COLOUR, PlacedBridge, Position, Supply
from referee.record import (
    Correction,
    Note,
    Record,
    RecordError,
    RecordVisitor,
    read_record,
    read_records,
    record_of,
    visit_records,
    write_record,
    write_records,
)
from referee.scoring import ColourScore, JoinedGroup, Score, score, triangular
from referee.verdicts import Illegal, Reason

__all__ = [
    "BRIDGE_POOL",
    "SIZES",
    "TILES_PER_COLOUR",
    "Bridge",
    "BridgeShape",
    "Cell",
    "Colour",
    "ColourScore",
    "Correction",
    "Flag",
    "Game",
    "Illegal",
    "IllegalMoveError",
    "InvalidMoveError",
    "JoinedGroup",
    "Move",
    "Note",
    "Outcome",
    "Pass",
    "PlacedBridge",
    "PlayedMove",
    "Position",
    "Reason",
    "Record",
    "RecordError",
    "RecordVisitor",
    "Score",
    "Supply",
    "Swap",
    "Termination",
    "Tiles",
    "bridge_shape",
    "cells_under",
    "geometry",
    "parse_move",
    "read_record",
    "read_records",
    "record_of",
    "round_of",
    "score",
    "triangular",
    "visit_records",
    "write_record",
    "write_records",
]
