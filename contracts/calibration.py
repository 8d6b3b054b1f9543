"""The calibration file: a small versioned JSON document, and its load/save.

A calibration says where the board's grid lies in the camera image (its four outer corners,
a1's corner first, then j1's, j10's and a10's), the image size it was made for, the colour
models learned from the board (Lab centres of empty cells, light and dark tiles), the lens
parameters when a lens calibration exists, and the thresholds the pipeline uses.

>>> cal = Calibration(image_size=(640, 480), corners=((100, 400), (500, 400), (500, 60), (100, 60)))
>>> Calibration.from_json(cal.to_json()) == cal
True
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, cast

FORMAT = "ponte-calibration"
VERSION = 1

_THRESHOLDS_FILE = Path(__file__).with_name("thresholds.json")


class CalibrationError(ValueError):
    """A calibration that cannot be used: a file missing, not JSON, of another version or
    with bad fields, or corners that cannot outline a board (`check_corners`)."""


class A1Corner(Enum):
    """Which corner of the board, as the image shows it, is a1."""

    BOTTOM_LEFT = "bottom-left"
    """a1 nearest the image's bottom-left; files run right, ranks up (the default)."""
    BOTTOM_RIGHT = "bottom-right"
    """a1 nearest the bottom-right; files run up, ranks left (the board turned a quarter)."""
    TOP_RIGHT = "top-right"
    """a1 nearest the top-right; files run left, ranks down (the board seen upside down)."""
    TOP_LEFT = "top-left"
    """a1 nearest the top-left; files run down, ranks right."""


@dataclass(frozen=True)
class Thresholds:
    """The pipeline's tunable numbers (defaults in contracts/thresholds.json)."""

    work_long_side: int
    """Pixels: locating the board from scratch works on the image scaled down (never up) so
    that its longer side is at most this."""
    min_board_area: float
    """Share of the image: the least area a candidate outline of the board may cover when
    the board is located from scratch."""
    grid_min_cells_span: float
    """Share of the outline found, across and along: the 11 printed lines fitted when
    locating are tried at spacings from this share of a tenth of the outline up to a tenth
    (the grid fills at least this much of the outline)."""
    cell_px: int
    """Pixels a cell spans in the top-down view at tile height, which every later stage reads."""
    margin_cells: float
    """Cells of board border the top-down view keeps around the grid on each side."""
    patch_fraction: float
    """Share of a cell, each way, covered by its 3 x 3 sample boxes round the tile top's
    centre (the rest is left to the tile's edges and the printed lines)."""
    empty_distance: float
    """Lab units from the bare board's colour beyond which a sample is not bare board (a
    bridge's deck candidate must lie so all along)."""
    cluster_min_separation: float
    """Lab units: two colour clusters nearer than this are one colour, however tight."""
    cluster_separation_sigmas: float
    """Two colour clusters are apart when their centres lie more than this many of their
    spreads (along the line joining them) apart."""
    light_vs_board_lightness: float
    """Lab lightness: a single tile colour found on the board is the light one when it is
    lighter than the bare board by more than this, else the dark one."""
    match_distance: float
    """Lab units within which a sample matches a learned colour (board, light, dark, bridge)."""
    uniform_spread: float
    """Lab units: a cell whose sample boxes lie within this of each other is uniform (one
    colour over the whole cell, as a tile or the bare board, not an edge or a hand)."""
    tile_max_group: int
    """Cells: a 4-connected group of one tile colour larger than this is not tiles but a
    sleeve, a hand or the board (an island has 4 tiles; a few more still read lets an
    illegal group be read and flagged)."""
    tile_min_votes: int
    """Of a cell's 9 sample boxes, how many must vote for a tile colour (and more than for
    the other) for the colour votes to read the tile."""
    empty_min_votes: int
    """Of a cell's 9 sample boxes, how many must vote for the bare board for the colour votes
    to read the cell as empty."""
    ring_occlusion_fraction: float
    """Share of the border's samples that may look off the bare border before the frame is
    flagged hidden (an arm reaching across)."""
    ring_outlier_error: float
    """Share of a border sample's brightness by which it may differ from the light field
    fitted to the border (or from the bare border) and still be bare border."""
    occlusion_min_cells: int
    """Cells: a connected patch of unreadable cells this large flags the frame hidden."""
    bridge_min_score: float
    """Share of a candidate deck's samples that must match the bridge colour for the colour
    reading (without the networks) to report a bridge."""
    bridge_max_spread: float
    """Lab units: the farthest a candidate deck's samples may lie from their mean colour
    (a deck is one grey)."""
    tile_height_cells: float
    """A tile's height, in cells: where its top appears in an oblique view."""
    bridge_height_cells: float
    """The lowest deck height tried, in cells above the board (see `bridge_heights`)."""
    bridge_height_step: float
    """Cells between the deck heights tried (see `bridge_heights`)."""
    bridge_heights: int
    """How many deck heights are tried, from `bridge_height_cells` by `bridge_height_step`
    (a deck is seen at the one that matches best)."""
    bump_misaligned_fraction: float
    """Share of the border's strips that must no longer correlate with the reference frame's
    for the camera or board to count as moved (a bump: the board is located afresh)."""
    adapt_rate: float
    """Weight of each clear frame in the slowly followed colours (colour model, bare border,
    bare board): the room's light changes slowly."""
    grid_bend_fit: float
    """Cells: a calibration whose located grid lies farther than this from the board's
    printed lines at some inner crossing (`vision.bend`) fits a lens to the lines."""
    grid_bend_limit: float
    """Cells: a calibration whose grid still lies farther than this from the printed lines
    is refused (the reader would read the wrong cells)."""
    reuse_after: int
    """Full reads running that must read the board alike, nothing hiding it, before a frame may
    be given the last reading without being read (see `BoardReader`). At 30 frames a second
    that is half a second, longer than the live loop's settle window (0.4 s): the loop commits
    a board on frames read in full, and a reading one frame got by chance is not repeated."""
    reuse_limit: int
    """Frames running given the last reading, at most, before one is read in full again (it
    keeps the colour model and the border following the light, and the reading honest)."""
    reuse_levels: float
    """How far (8-bit levels, in any colour channel) the mean of a block of the top-down view
    may differ from the frame last read for a frame to look the same. In generated scenes of
    every setup (blocks of 8 pixels at half size), the camera's noise alone moves a block by
    8 levels at most (the most in the dim, noisy setup); taking away one tile moves one by 48
    or more, one bridge by 44 or more."""
    reuse_block: int
    """Side of the blocks (top-down view pixels) compared for `reuse_levels`."""
    moving_frames: int
    """Frames running, at most, flagged as hidden after the bump check found the border moved,
    while the view is not yet still, before the board is located afresh all the same (a bump
    is located once the view has come to rest: located while it shakes, the board is found
    where it does not stay, and what was learned of its border would be thrown away)."""
    stir_levels: float
    """Grey levels (0-255, any channel) by which a block of the top-down view (`view_blocks`)
    changes from one frame to the next where something moves: a hand, an arm, its shadow
    (in the game videos looked at, a camera's noise moved a block's mean by 3 or less)."""
    stir_rest_s: float
    """Seconds for which the picture near a cell must not have moved (by `stir_levels`) for a
    new reading of it to be trusted: an arm's shadow lying still for a moment, or a hand
    holding a piece still over a cell, reads as a piece put down (in generated game videos,
    for up to 0.4 s, as long as the live loop's settle window). The readings between are
    held back (`ponte.live.settle.Stirring`: `Reading.pending`), and the live loop's
    settling counts them into its window: the two waits run together."""
    stir_flicker_changes: int
    """Changes of a place's reading within `stir_flicker_frames` readings that make it
    flickering (see there)."""
    stir_flicker_frames: int
    """A place (a cell, a bridge) whose reading changed `stir_flicker_changes` times within
    this many readings nothing hid is flickering (a glare spot) and not held back for it:
    held back, it would hold the whole board back; the live loop's settling lets the rest
    of the board settle around such a place (its `FLICKER_CHANGES` within 2 s). A hand or
    a shadow going by changes a cell once or twice."""
    stir_reach: float
    """Cells (each way, from where a cell's tile top appears) within which a moving block
    makes a changed reading of the cell not yet one to trust."""
    nudge_frames: int
    """Frames running flagged as hidden with nothing moving after which the reader locates the
    board afresh (see `BoardReader._look_again`). A hand at rest over the board costs a
    location then and ever more rarely (the gap doubles each time)."""
    border_settle_frames: int
    """Frames running (3 s at 30 frames a second) for which one difference of the border
    (or of its print) from the bare border must stay the same, nothing moving, before it is
    taken for the room's light or something put down beside the board, not an arm."""
    border_reach: float
    """Board units (the larger of across and along) from a changed border sample within which
    the cells must read as on the last clear frame (without one: must all be readable) before
    a lasting difference of the border is taken for the room's light (see
    `BoardReader._unchanged_near`)."""
    background_sure: float
    """How sure a reading must be that a cell is bare for the background to follow it."""
    shift_px: float
    """How far (top-down view pixels, a twelfth of a cell) the board's lines may lie from where
    the first clear frame showed them before a frame is not read as clear (see
    `grid_offsets`). A knock that turned the camera by 1.5 degrees moved them by 2-3 pixels and
    more (and a wide-angle board seen so read 3-8 edge cells wrong, the grid's border samples
    still on the wide border); over game videos without a knock, with hands and up to 30
    moves, the estimate stayed within 0.1 pixels."""
    shift_reach: int
    """Pixels (half a cell) either way `grid_offsets` looks for the board's lines."""
    shift_still_frames: int
    """Frames running, after the first whose lines lay off, in which they lie in the same place
    (to `shift_steady_px`) before the reader moves the grid after them: the camera has come to
    rest."""
    shift_steady_px: float
    """How far (top-down view pixels) the lines may move from one frame to the next and still
    be at rest."""
    nudge_min_px: float
    """How far (top-down view pixels) a corner must have moved for `BoardReader._look_again` to
    move the grid."""
    nudge_min_correlation: float
    """The least correlation of the aligned border bands for `realigned` to trust them."""
    realign_refits: int
    """How many times `realigned` fits the homography again without the pixels of the border
    band that match worst (`realign_outliers`), each time chosen by the fit before."""
    realign_outliers: float
    """The share of the border band's pixels that `realigned` leaves out of its refits: those
    that differ most from the view before once the two are lined up by the fit before. They
    are what does not move with the board: the table beyond its edge, and the tops of the
    edge cells' pieces, which stand above the board and so shift against it when the camera
    moves. Fitted with them, the ECC iterations did not settle: on a knocked camera's frame
    the corners went on moving by up to a pixel (half-size image) from one iteration to the
    next, so that where they stopped changed with the CPU's instruction set (AVX2 or
    AVX-512); without them the fit's correlation rose from 0.995 to 0.9995 and the corners
    lay within a quarter of a pixel of where the camera's move put them."""
    bridge_min_p: float
    """The bridge network's probability (after the deck network's look) from which a candidate
    counts as a bridge."""
    bridge_min_p_sure_ends: float
    """The bridge network's probability from which a candidate counts as a bridge when the
    cell network is sure both ends are tiles of one colour (`bridge_sure_ends`)."""
    bridge_sure_ends: float
    """The cell network's probability for an end to count as sure."""
    deck_end: float
    """A candidate the bridge network gives less than it needs is made a bridge by the deck
    network's look only where the cell network gives one end at least this chance of being a
    tile of either colour or hidden (by the bridge's foot, say): a bridge stands on tiles,
    and seen at an angle the board's far edge between two bare cells can look like a deck."""
    refine_p: float
    """the network's probability for a cell to count in the refit colours"""
    refine_move: float
    """Lab units a tile colour must move by to be replaced"""
    neighbour_changed: float
    """Lab units (the median over a cell's sample boxes, as for `changed_bare`) by which a cell
    the cell network reads as bare board must differ from the bare board seen there before to
    get the second look when it is next to a cell (side by side or corner to corner) that the
    cell network read as bare board and the look as a tile: where it was wrong about one cell,
    what misled it (a shadow) may lie over the next. A bare cell changes by less than 4 in
    nine cases out of ten (`foot_change`).

    A hand held high beside the board casts a shade over several cells at once; light tiles in
    it can look like the bare board to the cell network, one doubtfully and the next surely.
    When the look finds a tile where the network saw bare board, its neighbours that changed
    from their bare board are looked at too. Few frames take the extra look (a few per cent,
    more of them with a hand)."""
    same_as_bare: float
    """A cell the second look is taken at whose patch (the cell and the edges of its
    neighbours) differs from the calibration photo's bare board there by less than this
    (`bare_mismatch`, in units of the bare board's colour) is bare board, whatever the
    networks say: nothing was put there or next to it. A lamp's glare can make a bare cell
    read as a light tile to both networks when it looks just as it did at calibration. A tile
    differs from the bare board by more than this even where its colour is the board's (its
    own edges and shadow): on generated scenes the network never learnt from, no tile came
    below 4.6 / 128, while about one bare cell in ten came below 3 / 128."""
    changed_bare: float
    """Lab units (the median over a cell's sample boxes) by which a cell read as bare board must
    differ from the bare board seen there before to get a second look however sure the cell
    network is (see `second_look`). A light tile in a window's or a dim room's light can look
    like the board to the box means yet not like the board that was there. Cells a bridge
    could pass over (`_maybe_spanned`) are left out: a deck changes them too. It costs about
    half a look more a frame, most of them in window light, where the light has moved since
    calibration."""
    unchanged_tile: float
    """Lab units: a cell read as a tile whose colour differs from the bare board seen there
    before by less than this (the median over its sample boxes, as for `changed_bare`) gets the
    second look however sure the cell network is. A tile put down changes its cell, unless it
    is of the board's own colour (a white tile where a window burns the picture out), and the
    look tells that apart by the tile's edges and shadow (see `same_as_bare`); a bare cell
    changes by less than 4 in nine cases out of ten (see `foot_change`). Under a
    warm lamp the cell network can read a bare cell that has hardly changed since calibration
    as a light tile, and be sure of it; such looks are rare."""
    saturated_levels: float
    """Grey levels: a cell read as bare board whose sample boxes are all at least this bright in
    every channel of the picture (before the light is evened out) gets the second look however
    sure the cell network is. Where a window's light burns the picture out, a white tile and
    the bare board are both white: only the tile's edges and shadow tell them apart, and the
    box means do not see those. Such cells are rare, so the looks cost little."""
    deck_looks: int
    """Candidates given a second look by the deck network (`vision.decks.LOW` to `HIGH`) at
    most this many a frame, the least sure first. A clean frame has a few such
    candidates, some in a lamp's glare more than 16; with a hand over the board, many more
    (the reading then waits anyway), and this keeps such a frame quick."""
    deck_faint: float
    """Candidates between this and `vision.decks.LOW` (faint ones: a deck washed out by a
    lamp's glare, or in a window's shadow) get a second look too (see `deck_faint_looks`)."""
    deck_faint_looks: int
    """Faint candidates (`deck_faint`) given a look at most this many a frame, the likeliest
    first: they are many in a crowded frame (a few a frame, over 20 in a busy one), each
    look costs about 50 us, and few are bridges. Looking at a few finds most of the bridges
    that looking at all of them would, at a small share of the cost. The deck network learnt
    from every candidate above 1e-5."""
    deck_sure_looks: int
    """Candidates fainter still (at most `deck_faint`) between two tiles the cell network is sure
    are of one colour get a look too, at most this many a frame, the likeliest first. The
    bridge network can miss a deck it sees badly (at the far edge with the camera at 45
    degrees, or in a lamp's shadow) and give it 1e-8-1e-4, and the deck network then often
    finds it. A frame has about 15 such candidates; looking at all of them costs about 0.9 ms
    a frame, looking at the likeliest few about 0.1 ms, for most of the same bridges found."""
    shadow_tone: float
    """How far a cell's shade-free colour (a and b over L + 16) may lie from the bare board's
    there for the cell to pass as that board in shadow (when `shadow_board_tone` allows)."""
    shadow_board_tone: float
    """How strong the board's own shade-free colour must be for `shadow_tone` to apply (on a
    grey or white board a black or white tile has the board's shade-free colour too)."""
    board_unlike: float
    """Lab distance from the bare board seen at the same cells beyond which a cluster's cells
    are not the bare board (the bare board differs by at most 8 after the light has changed a
    little; tiles by at least 12 in the evaluation's setups), when at least `board_like_cells`
    other cells are within `board_like` of it."""
    board_like: float
    """Lab distance from the bare board seen there within which a cell still looks as it did:
    at least `board_like_cells` such cells show the light has not changed (see
    `board_unlike`)."""
    board_like_cells: int
    """Cells that must look as the bare board did (`board_like`) for `board_unlike` to apply."""
    tile_tone: float
    """How far (a and b over L + 16) a colour hidden in a cluster of the board's shadows must
    lie from the board's own to count as a tile colour (see `_colour_of_its_own`). Under the
    evaluation's window light, red and brown tiles lay 0.46-1.03 from the board's; the grey of
    bridges and the bluish shade of the board under them, 0.27-0.32 (and one brown edition's
    tiles, deep in a shadow, 0.20: theirs is not found this way)."""
    second_look_p: float
    """A cell whose top probability from the cell network, of what it can be in view
    (`vision.read_cells.in_view`), is below this gets a second look from the patch network
    (see also `rival_p` and `second_looks`)."""
    rival_p: float
    """A cell the cell network is surer of than `second_look_p` gets the second look too when
    its second likeliest state in view has more than this: most light tiles the cell network
    reads as bare board are cells it gives 0.99-0.999, with a little for a light tile.
    Looking at those costs about one cell a frame; looking at every cell below 0.998 would
    cost several milliseconds a frame."""
    second_looks: int
    """Cells given the second look, at most, a frame, the least sure first, when the cell
    network takes some cell for hidden. With an arm over the board nearly all cells are unsure (the
    reading then waits anyway), and this keeps such a frame quick. A frame with nothing
    hidden has no limit: a frame of a clean board has a few unsure cells, but a warm lamp can
    make most of them unsure (46 and 70 in some lamp frames), and a cell left out keeps the
    cell network's answer."""
    candidate_end_p: float
    """The cell network's probability of a tile (or a foot hiding one) from which a cell counts
    as a possible bridge end: low, since a bridge's foot can hide most of a tile's top."""
    candidate_fit_p: float
    """A bridge stands on two tiles of one colour over bare cells: while tracking (the bare
    board seen before known), a candidate is asked about only when the cell network gives its
    two ends one colour (or a foot hiding them) and each cell it passes over bare board (or
    hidden) at least this chance. This leaves out about three in five candidates, and none
    the bridge network takes for a bridge. Reading a photo from scratch, the cell network is
    less sure of itself, and the test is not made."""
    foot_end_p: float
    """A bridge's foot can hide its tile so well that the cell network reads bare board there
    with conviction, and the pair never becomes a candidate. So, while tracking, a pair is
    also asked about when one end is a tile in view at least this chance (a hidden cell may
    be a hand) and the other, read as bare, has changed from the bare board seen there before
    (`foot_change`, `foot_spread`)."""
    foot_change: float
    """Lab units (the median over the cell's sample boxes) by which a cell read as bare must
    differ from the bare board seen there before to be taken for a hidden foot (see
    `foot_end_p`): a bare cell's change is below 4 in nine cases out of ten, only shadows and
    what stands beside it change it."""
    foot_spread: float
    """... and how many times as much as the cells read as bare board have changed (the
    median) it must differ: after a change of light (a webcam's exposure, a cloud) every bare
    cell has changed a little, and a foot still stands out."""
    foot_p: float
    """The probability (the bridge network's, or the deck network's after a second look) from
    which a pair asked about for a hidden foot (`foot_end_p`) counts as a bridge: a margin
    over the plain `bridge_min_p`, since it has only the deck to go by. Real bridges with a
    foot over one end come to about 0.9 or more; false pairs (a light tile and a bare cell in
    a tile's shadow) can come to three quarters, and 0.9 would lose real ones."""

    mirror_below: float
    """A cell the patch network gives less than this (of what a cell in view can be) is read
    again in its patch's seven other turns and mirror images, and the eight answers are
    averaged (at most `mirror_looks` cells a frame)."""
    mirror_looks: int
    """Cells read again in their patches' turns and mirror images (`mirror_below`), at most, a
    frame, the least sure first (with an arm over the board most are unsure, and the reading
    then waits anyway)."""

    line_prominence: float
    """How many times its window's mean edge strength a printed line's peak must be for its
    crossing to be measured (`vision.bend`): below it, the line is too faint there (glare, a
    dim corner, a hand) to say where it is."""
    min_crossings: int
    """Crossings of the printed lines (of 81 inner ones) that must be measured to say how the
    board bends or to fit a lens to it."""

    odd_levels: float
    """Grey levels: a border sample differing by less (from its neighbours along the ring, or
    from the bare border behind it) is noise or a soft shadow, not an arm."""
    still_share: float
    """A border sample has not moved while it stays within this share of its brightness of
    where it was (a third of `ring_outlier_error`, the change that makes it odd: frames of
    one scene, each with noise of 2 grey levels and JPEG-encoded again, move the samples by
    up to 3% and 1.9 levels), or within `still_levels`."""
    still_levels: float
    """Grey levels within which a border sample has not moved either (see `still_share`: a
    dark border's samples are noisy for their brightness)."""
    shadow_tint: float
    """A changed border sample is a shadow when the ratios of its channels to the bare
    border's, all below 1, lie within this share of their mean of each other (a shadow darkens
    every channel by about the same factor; an arm or a sleeve changes the colour), plus
    `shadow_noise_levels`."""
    shadow_noise_levels: float
    """Grey levels of the camera's noise allowed on top of `shadow_tint`."""
    shadow_deepest: float
    """The least ratio of a shadow's channels to the bare border's: a "shadow" darker than
    this is something dark lying there."""

    grid_square_px: int
    """Pixels: a candidate outline of the board is warped to a square of this side when the
    grid's lines are looked for in it."""
    grid_min_share: float
    """How many times the mean edge strength the median printed line must have (its share,
    on the poorer axis) for an outline to hold a grid at all."""
    line_min_share: float
    """The least share of the edge strength each of the eleven lines each way must have when
    the outline was found from the cells alone (no border tells the board from a smaller
    grid or a chessboard then)."""
    line_full_share: float
    """A grid whose weakest line has less than this share ranks lower in proportion: numbered
    a row or column off, a grid has a line on the border, where none is printed."""
    rim_min_share: float
    """The least share an outermost line of a faint-rimmed grid has (a grid printed in a dark
    colour beside a dark border, whose outermost lines have an edge on one side only)."""
    rim_alike: float
    """How many times the other's share the stronger outermost line of a faint rim may have:
    numbered a line off, a grid has one end on the border and one on a full line."""
    bare_rim_hue: float
    """Chromaticity (a channel over the sum) by which a sample just outside the grid may
    differ from its neighbours along the ring and still be the bare border: a shadow keeps the
    hue; a hand, an arm or a sleeve changes it (see `bare_rim_noise`)."""
    bare_rim_brighter: float
    """How many times as bright as its neighbours along the ring a sample just outside the
    grid may be: no shadow brightens the border."""
    bare_rim_noise: float
    """... nor changes the hue by more than this many times its typical change along the
    ring (a dim, noisy photo's hue varies from sample to sample by itself; `bare_rim_hue`)."""
    grid_min_cells: int
    """Cells (closed four-sided contours of about a cell's size) a group must have for a grid
    to be fitted to it when the board is located from its cells."""
    lattice_near: float
    """Times a cell's size within which another cell lies beside it (a grid's next cell lies
    about 1.1-1.2 of a cell's size away): a cell with fewer than two beside it is a loose tile,
    not one of the grid's."""
    cell_link_reach: float
    """Times a cell's size up to which cells are grouped as one grid (three cells away: a
    shadow's edge may break the cells between)."""

    faint_hidden_p: float
    """The cell network's chance of being hidden below which the patches of hidden cells that
    alone flag a frame (nothing crossing the border, no wide group of one tile colour) are read
    as stray cells (see `stray_seen_p`) rather than left empty, when every cell of them is
    below it. The frame stays flagged and the cells listed as hidden. A lamp's glare washes
    tiles out so that the cell network half takes them for hidden (0.5-0.8), where a hand's
    cells come near 1.0: read as stray cells, such tiles are read as tiles instead of bare
    board, while a hand's cells stay bare."""
    stray_seen_p: float
    """A stray cell the cell network takes for hidden on a board nothing hides is read as the
    colour it finds likeliest when it gives empty, light and dark at least this chance in all,
    else as the nearest learned colour: where the network gives the three almost no chance,
    its choice among them is a guess, and the nearest colour is the better one."""
    faint_levels: float
    """Grey levels a border sample must differ by, beside one changed by `clear_levels`, to
    count (see `vision.occlusion.fading_arm`): below `odd_levels`, which alone counts. A hand
    over a border of its own colour may change one box clearly and the next just under what
    counts, and one box alone is not enough. Such a frame is flagged and read as it would be
    otherwise."""
    clear_levels: float
    """Grey levels by which a border sample off the bare border makes the faint changes next
    to it count (see `faint_levels`)."""
    faint_beside: float
    """Cells along the border from a clear change within which a faint one counts: the next
    box each way."""
    deck_share: float
    """Share of a border box a bridge's deck, leaning over it, must be able to cover for the
    deck to excuse a change of the box."""
    lean_outer_share: float
    """Share of a border box's outer half a tile (or a deck) must be able to reach, leaning
    over it, to excuse a change of that outer half."""
    deck_lighter: float
    """Lab lightness above the border's beyond which a change of both halves of a border
    sample beside the end of a bridge is not excused as the bridge's where its deck cannot
    reach the outer half (`vision.occlusion.odd_boxes`). A pale hand over a pale border beside
    a bridge's end makes the border much lighter there; a deck's shadow changes both halves
    too, but darkens them. A window's light over a whole side can lighten them as well, and
    then the rest of that side flags the frame."""
    tinted_darker: float
    """Lab lightness below the border's from which a tinted change of a border sample beside a
    tile or a bridge, its outer half unchanged, counts as that piece's shadow (a shadow in
    window light is lit by the sky: darker than the border, but tinted)."""
    unlike_tile: float
    """Lab units (`colour_distance`) from its colour's learned tile colour beyond which a cell
    read as a tile may be something else: skin, a sleeve. Such a tile beside a changed border
    sample is not excused as leaning over it nor as casting a tinted shadow on it, and a
    change of the outer half alone beside it counts. Lower, more frames with nothing over the
    board are flagged."""
    lean_reach: float
    """How far along the way from the border's colour to a tile's (1: the tile's own colour)
    a border sample a tile leans over may lie: a tile's shaded side can be darker than its
    top."""
    lean_slack: float
    """... and how far beyond the share of the box the tile can cover (blur, a tile's
    shading)."""
    lean_off_way: float
    """How far off that way, relative to its length, such a sample may lie (plus
    `lean_off_min`): a sleeve lies off the way."""
    lean_off_min: float
    """Lab units off the way from border to tile allowed on top of `lean_off_way`."""
    shadow_beside: float
    """Cells along the border from a changed border box within which a shadow on the border
    counts as that change's shadow: the boxes next to it, a cell apart. An arm casts its
    shadow right beside where it crosses the border; a tile's long shadow in window light can
    lie on the border far from any change, and counting every shadow once any box had
    changed would flag frames with nothing over the board. A shadow on a box's outer half
    alone counts too, where its inner half kept its colour: a sleeve of the border's own
    colour may change one box clearly and only the outer halves of its neighbours, as a
    shadow does."""
    reaching_hidden_p: float
    """The cell network's chance of being hidden at which the cells between a hidden cell and
    the board's edge count as a finger reaching it (`vision.occlusion.reaches_edge`). A
    fingertip one cell in is a stray cell, but the finger over the edge cell beside it gives
    that cell a fair chance of being hidden (about a half), where on boards with nothing over
    them the cells between a hidden cell and the edge stay well below this. An edge cell this
    likely hidden beside a border sample that counts is a finger too (`finger_on_border`)."""
    apart_tile: float
    """Lab units (`colour_distance`) from its colour's learned tile colour from which a cell
    read as a tile at the edge, beside a border sample whose outer half alone changed, flags
    the frame when it is also `apart_ratio` times as far as any other tile of its colour (a
    pale hand the colour of the board reaching over a corner; see
    `vision.occlusion.tile_apart_on_border`)."""
    apart_ratio: float
    """How many times further than every other tile of its colour from the learned colour
    such a tile must be (see `apart_tile`)."""
    print_quiet_levels: float
    """Grey levels: the border's print is compared with the calibration photo's beside the
    border samples whose colour (and their outer halves') changed by less than this from the
    bare border seen before (a change of colour is the other evidence's to judge) ..."""
    print_least_spread: float
    """... where the calibration photo shows print there: its grey levels spread (standard
    deviation) by at least this ..."""
    print_reach_px: int
    """... as it lies, or moved by up to this many pixels of the top-down view each way (the
    camera drifts by a pixel or two, which the reading allows, `shift_px`) ..."""
    print_likeness: float
    """... and the frame is flagged when the print's correlation with the photo's falls below
    this beside one of them. A pale hand over a pale border may change no border sample's
    colour while its fingers over an edge cell read as a tile; the print they hide correlates
    far below this with the photo's (0.2 or less), where a border nothing covers stays above
    0.5 in window light, with loose tiles on the table and all."""

    @classmethod
    def from_json(cls, data: Any, *, base: Thresholds | None = None) -> Thresholds:
        """Thresholds from a JSON object; keys it lacks come from `base` (or the defaults)."""
        if not isinstance(data, dict):
            raise CalibrationError("thresholds must be a JSON object")
        start = base if base is not None else default_thresholds()
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise CalibrationError(f"unknown threshold(s): {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            want = int if known[name].type == "int" else float
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CalibrationError(f"threshold {name} must be a number, not {value!r}")
            values[name] = want(value)
        return replace(start, **values)


_DEFAULTS: list[Thresholds] = []


def default_thresholds() -> Thresholds:
    """The default thresholds, read once from contracts/thresholds.json."""
    if not _DEFAULTS:
        data = json.loads(_THRESHOLDS_FILE.read_text(encoding="utf-8"))
        known = {f.name: f for f in fields(Thresholds)}
        missing = sorted(set(known) - set(data))
        if missing:
            raise CalibrationError(f"{_THRESHOLDS_FILE}: missing {', '.join(missing)}")
        kinds = {k: int if known[k].type == "int" else float for k in known}
        values: dict[str, Any] = {k: kinds[k](v) for k, v in data.items()}
        _DEFAULTS.append(Thresholds(**values))
    return _DEFAULTS[0]


Lab = tuple[float, float, float]


@dataclass(frozen=True)
class ColourModel:
    """Lab colour centres (L 0..100, a and b around 0) learned from the board.

    `empty` is the bare board inside a cell, `ring` the board's border around the grid;
    `light` and `dark` are the tiles and `bridge` the bridges' grey, each None until seen.
    """

    empty: Lab
    ring: Lab
    light: Lab | None = None
    dark: Lab | None = None
    bridge: Lab | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: (list(v) if v is not None else None) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: Any) -> ColourModel:
        if not isinstance(data, dict):
            raise CalibrationError("colours must be a JSON object")
        try:
            return cls(
                empty=_lab(data["empty"]),
                ring=_lab(data["ring"]),
                light=_lab(data["light"]) if data.get("light") is not None else None,
                dark=_lab(data["dark"]) if data.get("dark") is not None else None,
                bridge=_lab(data["bridge"]) if data.get("bridge") is not None else None,
            )
        except KeyError as exc:
            raise CalibrationError(f"colours: missing {exc.args[0]}") from exc


@dataclass(frozen=True)
class Lens:
    """Pinhole camera matrix and distortion coefficients (OpenCV's model) for one image size."""

    camera_matrix: tuple[tuple[float, float, float], ...]
    distortion: tuple[float, ...]
    image_size: tuple[int, int]
    rms_error: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "camera_matrix": [list(r) for r in self.camera_matrix],
            "distortion": list(self.distortion),
            "image_size": list(self.image_size),
            "rms_error": self.rms_error,
        }

    @classmethod
    def from_json(cls, data: Any) -> Lens:
        if not isinstance(data, dict):
            raise CalibrationError("lens must be a JSON object")
        try:
            matrix = tuple(tuple(float(v) for v in row) for row in data["camera_matrix"])
            dist = tuple(float(v) for v in data["distortion"])
            size = _size(data["image_size"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"lens: bad or missing field ({exc})") from exc
        if len(matrix) != 3 or any(len(r) != 3 for r in matrix):
            raise CalibrationError("lens: camera_matrix must be 3 x 3")
        if len(dist) not in (4, 5, 8, 12, 14):
            raise CalibrationError("lens: distortion must have 4, 5, 8, 12 or 14 coefficients")
        rows = cast(tuple[tuple[float, float, float], ...], matrix)  # 3 x 3, checked above
        return cls(rows, dist, size, float(data.get("rms_error", 0.0)))


BOARD_CELLS = 100
BOARD_VALUES = 27  # Lab of a cell's 3 x 3 sample boxes
VIEW_LIGHT = 18  # a quadratic in x and y per BGR channel


@dataclass(frozen=True)
class Calibration:
    """Everything the pipeline needs to read one camera's view of one board quickly."""

    image_size: tuple[int, int]
    corners: tuple[tuple[float, float], ...]
    a1: A1Corner = A1Corner.BOTTOM_LEFT
    colours: ColourModel | None = None
    lens: Lens | None = None
    thresholds: Thresholds = field(default_factory=default_thresholds)
    ring: tuple[tuple[float, float, float, float, float], ...] | None = None
    """The bare border around the grid in the calibration photo, per sample box: its
    board coordinates (x, y) and its BGR. A hand or an arm across the border is found as
    a difference from it (a fixed shadow on the border is in it too)."""
    board: tuple[tuple[float, ...] | None, ...] | None = None
    """The bare board as the calibration photo shows it, per cell (a1, b1, ... j10): the Lab
    of its 3 x 3 sample boxes (27 numbers, light-normalised as the reader measures them),
    or None for a cell a tile covered. A tile is then also what changed since, which a
    fixed shadow, a window's light or a lamp's glare on the bare board did not."""
    view: str | None = None
    """The calibration photo's top-down view of the board as the reader warps it (a PNG
    image, base64), for the second look at a cell to compare with (`vision.patches`)."""
    view_light: tuple[float, ...] | None = None
    """The light field fitted to the border in that view (`VIEW_LIGHT` numbers)."""

    def __post_init__(self) -> None:
        if len(self.corners) != 4 or any(len(c) != 2 for c in self.corners):
            raise CalibrationError("corners must be four (x, y) points")
        if self.board is not None and (
            len(self.board) != BOARD_CELLS
            or any(row is not None and len(row) != BOARD_VALUES for row in self.board)
        ):
            raise CalibrationError(
                f"board: must be {BOARD_CELLS} rows of {BOARD_VALUES} numbers or null")
        if (self.view is None) != (self.view_light is None):
            raise CalibrationError("view and view_light come together")
        if self.view_light is not None and len(self.view_light) != VIEW_LIGHT:
            raise CalibrationError(f"view_light: must be {VIEW_LIGHT} numbers")

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "image_size": list(self.image_size),
            "corners": [[round(x, 3), round(y, 3)] for x, y in self.corners],
            "a1": self.a1.value,
            "colours": self.colours.to_json() if self.colours else None,
            "lens": self.lens.to_json() if self.lens else None,
            "ring": [[round(v, 2) for v in row] for row in self.ring] if self.ring else None,
            "board": [None if row is None else [round(v, 2) for v in row]
                      for row in self.board] if self.board else None,
            "view": self.view,
            "view_light": list(self.view_light) if self.view_light is not None else None,
            "thresholds": {
                k: v for k, v in asdict(self.thresholds).items()
                if v != getattr(default_thresholds(), k)
            },
        }

    @classmethod
    def from_json(cls, data: Any) -> Calibration:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CalibrationError(f"not a calibration file (no \"format\": \"{FORMAT}\")")
        version = data.get("version")
        if version != VERSION:
            raise CalibrationError(
                f"calibration format version {version!r} is not supported (this is {VERSION})"
            )
        try:
            corners = tuple((float(x), float(y)) for x, y in data["corners"])
            size = _size(data["image_size"])
            a1 = A1Corner(data.get("a1", A1Corner.BOTTOM_LEFT.value))
        except KeyError as exc:
            raise CalibrationError(f"missing field {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"bad field ({exc})") from exc
        colours = data.get("colours")
        lens = data.get("lens")
        ring = data.get("ring")
        try:
            ring_rows = tuple(
                (float(x), float(y), float(b), float(g), float(r)) for x, y, b, g, r in ring
            ) if ring is not None else None
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"ring: must be rows of five numbers ({exc})") from exc
        board = data.get("board")
        try:
            board_rows = tuple(
                None if row is None else tuple(float(v) for v in row) for row in board
            ) if board is not None else None
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"board: must be rows of numbers or null ({exc})") from exc
        view, view_light = data.get("view"), data.get("view_light")
        if view is not None:
            try:
                base64.b64decode(view, validate=True)
            except (TypeError, ValueError, binascii.Error) as exc:
                raise CalibrationError(f"view: must be a base64 PNG image ({exc})") from exc
        try:
            light = tuple(float(v) for v in view_light) if view_light is not None else None
        except (TypeError, ValueError) as exc:
            raise CalibrationError(f"view_light: must be numbers ({exc})") from exc
        calibration = cls(
            image_size=size,
            corners=corners,
            a1=a1,
            colours=ColourModel.from_json(colours) if colours is not None else None,
            lens=Lens.from_json(lens) if lens is not None else None,
            thresholds=Thresholds.from_json(data.get("thresholds", {})),
            ring=ring_rows,
            board=board_rows,
            view=view,
            view_light=light,
        )
        check_corners(calibration.corners, calibration.image_size)
        return calibration


MIN_CORNER_ANGLE = 25.0
"""Degrees: the board seen so obliquely that a corner's angle is sharper (or wider than 180
less this) cannot be read; such corners are a mistake."""
MIN_BOARD_SIDE_PX = 40.0
"""The shortest side of the grid, in pixels, that still leaves cells big enough to read."""
OUTSIDE_TOLERANCE = 0.02
"""How far (a fraction of the image's size) a corner may lie beyond the image's edge."""


def check_corners(corners: Any, image_size: tuple[int, int]) -> None:
    """Raise CalibrationError, saying why, unless `corners` (four (x, y) image points in
    order around the board) outline a board a camera can show in an image of `image_size`:
    four distinct finite points, inside the image, a convex quadrilateral that does not
    cross itself, sides long enough to read and no corner too sharp.

    >>> check_corners([(100, 400), (500, 400), (500, 60), (100, 60)], (640, 480))
    >>> try:
    ...     check_corners([(100, 400), (500, 60), (500, 400), (100, 60)], (640, 480))
    ... except CalibrationError as exc:
    ...     print(exc)
    the corners cross over each other: give them in order around the board
    """
    try:
        points = [(float(x), float(y)) for x, y in corners]
    except (TypeError, ValueError):
        raise CalibrationError("corners must be four (x, y) points") from None
    if len(points) != 4:
        raise CalibrationError("corners must be four (x, y) points")
    if not all(math.isfinite(v) for p in points for v in p):
        raise CalibrationError("corners must be finite numbers")
    w, h = image_size
    dx, dy = OUTSIDE_TOLERANCE * w, OUTSIDE_TOLERANCE * h
    for k, (x, y) in enumerate(points):
        if not (-dx <= x <= w + dx and -dy <= y <= h + dy):
            raise CalibrationError(
                f"corner {k + 1} ({x:.0f}, {y:.0f}) lies outside the {w} x {h} image")
    for i in range(4):
        for j in range(i + 1, 4):
            if math.dist(points[i], points[j]) < MIN_BOARD_SIDE_PX:
                raise CalibrationError(
                    f"corners {i + 1} and {j + 1} are (nearly) the same point: the board "
                    f"must be at least {MIN_BOARD_SIDE_PX:.0f} pixels across")
    turns = []
    for k in range(4):
        (ax, ay), (bx, by), (cx, cy) = points[k - 1], points[k], points[(k + 1) % 4]
        turns.append((bx - ax) * (cy - by) - (by - ay) * (cx - bx))
    if not (all(t > 0 for t in turns) or all(t < 0 for t in turns)):
        if _crossing(points):
            raise CalibrationError(
                "the corners cross over each other: give them in order around the board")
        raise CalibrationError("the corners do not outline a convex board (three lie on one "
                               "line, or one lies inside the others)")
    for k in range(4):
        a, b, c = points[k - 1], points[k], points[(k + 1) % 4]
        u, v = (a[0] - b[0], a[1] - b[1]), (c[0] - b[0], c[1] - b[1])
        cos = (u[0] * v[0] + u[1] * v[1]) / (math.hypot(*u) * math.hypot(*v))
        angle = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
        if not MIN_CORNER_ANGLE <= angle <= 180.0 - MIN_CORNER_ANGLE:
            raise CalibrationError(
                f"the angle at corner {k + 1} is {angle:.0f} degrees: no camera sees a square "
                f"board so (between {MIN_CORNER_ANGLE:.0f} and "
                f"{180 - MIN_CORNER_ANGLE:.0f} expected)")


def scaled_calibration(calibration: Calibration, image_size: tuple[int, int]) -> Calibration:
    """The same calibration for the same view at another resolution (a camera or stream
    that came back sending bigger or smaller frames): corners and lens scaled; the rest is
    in the board's own coordinates and stays."""
    sx = image_size[0] / calibration.image_size[0]
    sy = image_size[1] / calibration.image_size[1]
    lens = calibration.lens
    if lens is not None:
        (fx, s0, cx), (s1, fy, cy), last = lens.camera_matrix
        lens = replace(lens, camera_matrix=((fx * sx, s0, cx * sx), (s1, fy * sy, cy * sy),
                                            last), image_size=image_size)
    return replace(calibration, image_size=image_size, lens=lens,
                   corners=tuple((x * sx, y * sy) for x, y in calibration.corners))


def _crossing(points: list[tuple[float, float]]) -> bool:
    """Whether the outline's opposite sides cross."""
    def side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    def cross(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float],
              d: tuple[float, float]) -> bool:
        return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0

    p = points
    return cross(p[0], p[1], p[2], p[3]) or cross(p[1], p[2], p[3], p[0])


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file; CalibrationError with the file name for anything wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot read ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{path}: not JSON ({exc})") from exc
    try:
        return Calibration.from_json(data)
    except CalibrationError as exc:
        raise CalibrationError(f"{path}: {exc}") from exc


def save_calibration(calibration: Calibration, path: str | Path) -> None:
    """Write a calibration file (pretty JSON, stable key order)."""
    Path(path).write_text(json.dumps(calibration.to_json(), indent=2) + "\n", encoding="utf-8")


def _lab(value: Any) -> Lab:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise CalibrationError(f"a colour must be three numbers (L, a, b), not {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


def _size(value: Any) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise CalibrationError(f"image_size must be [width, height], not {value!r}")
    w, h = int(value[0]), int(value[1])
    if w <= 0 or h <= 0:
        raise CalibrationError(f"image_size must be positive, not {value!r}")
    return (w, h)
