"""Stage 7, Tracking: the live loop's reader, frame after frame.

`BoardReader` keeps between frames what one frame cannot tell: the plan and the colour
model learned at calibration, the bare board seen so far, the border's reference view. It
notices a bumped camera or board (`vision.bump`, `vision.border`) and locates the board
again, and it gives a still board's reading to a frame that looks the same without reading
it again. Each reading says near which cells the picture moved from the frame before
(`Observation.moved`); waiting for the picture to rest is the live loop's
(`ponte.live.settle`), not the reader's: the reader counts frames, never time.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, fields, replace

import cv2
import numpy as np

from contracts.calibration import Calibration, ColourModel, Thresholds
from vision.border import (
    border_change_levels,
    border_changes,
    border_unmoved,
    split_changes,
    strip_correlation,
)
from vision.bump import (
    grid_offsets,
    grid_profiles,
    nudged_corners,
    realigned,
)
from vision.cells import SIZE, Cell, cells_under
from vision.classify import (
    EMPTY,
    UNKNOWN,
    CellReading,
    blend_colours,
    learn_colours,
    make_shade,
    row_max,
)
from vision.errors import VisionError
from vision.features import SamplingPlan, box_means, integral, warp_topdown
from vision.imageio import check_image, decode_image
from vision.learned import one_blas_thread
from vision.locate import locate_board, orient_corners
from vision.measure import Measurement, Plan, make_plan, measure, measure_view, relit, ring_strips
from vision.observation import Observation
from vision.occlusion import grey_view, print_likeness
from vision.patches import BareView
from vision.pipeline import background_of, check_size, lab3, lens_of, observe


def read_calibrated(image: np.ndarray | bytes, calibration: Calibration, *,
                    source: str = "frame") -> Observation:
    """Read one image (a BGR array at the calibration's size, or its encoded bytes) as the
    live loop reads a frame: by a `BoardReader` made from the calibration, which also
    knows the bare board's border and, from `ponte calibrate --empty`, every cell's bare
    board. Bytes are what `ponte eval vision`'s `tracker` mode reads, a decoded frame what
    its `live` mode reads. A new reader for each image: no image's reading depends on
    another's. `source` names the image in errors."""
    return BoardReader(calibration).read(image, source=source)


@dataclass(frozen=True)
class TrackState:
    """What the live reader knows between frames: a plain value. `update` makes the next one
    from it and a frame, never changing it; `start` makes the first from a calibration.

    The fields in four groups: the camera's (fixed), what was learned of the board, where
    the grid lies and how its border looked, and what the last frames showed."""

    calibration: Calibration
    settings: Thresholds
    """The calibration's parameters (`calibration.thresholds`)."""
    reduce: int
    """Encoded frames are decoded at 1/`reduce` size, and frames read at it."""
    reuse: bool
    """Whether a still board's reading may be given to a frame without reading it."""
    size: tuple[int, int]
    """The frames' size as read (the calibration's over `reduce`) ..."""
    scale: float
    """... that size over the calibration's ..."""
    k: np.ndarray | None
    dist: np.ndarray | None
    """... and the lens at that size (camera matrix and distortion; None without one)."""
    inner: int
    """The top-down view's margin (pixels) outside the grid."""

    model: ColourModel | None
    """The colour model, learned at calibration and adapting slowly."""
    background: np.ndarray
    """The bare board seen so far, per sample box ((100, 9, 3) Lab, NaN where not known)."""
    border: np.ndarray | None
    outer: np.ndarray | None
    """The bare border (whole boxes, outer halves) the border is judged against."""
    view: BareView | None
    """The calibration photo's view of the bare board (the cells' second look reads it)."""
    print_grey: np.ndarray | None
    """The grey top-down view the border's print is compared with (`print_likeness`):
    the calibration photo's, until something has lain still beside the board ..."""
    print_odd: np.ndarray | None
    """... the border samples beside which the print differs from it, on the last frame
    read in full ..."""
    print_steady: int
    """... and for how many frames running the same have, nothing moving."""

    plan: Plan
    """The grid in use and everything sampled through it."""
    blocks: np.ndarray
    """The top-down view's blocks (`view_blocks`) ..."""
    block_cells: np.ndarray
    """... and the cells near each (`blocks_near_cells`)."""
    reference: np.ndarray | None
    """The border's strips (`ring_strips`) on the first frame nothing hid, which the bump
    check compares each frame's with ..."""
    reference_grey: np.ndarray | None
    """... the top-down view's grey levels then (`_look_again`) ..."""
    lines: np.ndarray | None
    """... and its edges (`grid_profiles`), which later frames' must line up with."""
    offsets: np.ndarray | None
    """Where the board's lines lay from those in the last frame (`grid_offsets`) ..."""
    steady_offsets: int
    """... and for how many frames running they have lain there (off by `shift_px` or
    more): the camera, knocked, has come to rest."""
    bumps: int
    """How often the board was located again (a bump, a knock, a look again)."""

    steady: int
    """Frames running the border's difference from the bare border has stayed the same ..."""
    last_odd: np.ndarray | None
    """... the border samples that differed on the last frame ..."""
    still: np.ndarray | None
    """... and the border's samples (and their outer halves) when its present difference
    began, to tell whether anything on it has moved since (see `border_unmoved`)."""
    last_blocks: np.ndarray | None
    """The last frame's blocks (`view_blocks`) ..."""
    view_still: bool
    """... whether that frame's top-down view looked as the one's before it ..."""
    last_occluded: bool
    """... and whether something hid the board in it."""
    moving: int
    """Frames running whose border has moved (`_moved`) while the view was not still."""
    hidden_still: int
    """Frames running flagged as hidden (the frame before each) that look as the frame
    before them (see `view_blocks`): nothing moves, yet something seems to hide the
    board ..."""
    next_look: int
    """... and the count at which the board is next located afresh (`_look_again`)."""
    clear_codes: np.ndarray | None
    """The cells' reading (`CellReading.codes`) of the last frame nothing hid ..."""
    last_codes: np.ndarray | None
    """... and of the last frame read."""
    kept: tuple[np.ndarray, Observation] | None
    """The last frame read in full (its top-down view's blocks) and its reading, while
    nothing hides the board (see `_reusable`) ..."""
    same_reads: int
    """... how many full reads running have read the board so, each frame looking as
    the one before ..."""
    reuses: int
    """... and how many frames since have been given that reading."""
    reused: int
    """Frames given the last reading without being read, in all (see `_reusable`)."""

    @property
    def corners(self) -> np.ndarray:
        """The grid corners now in use, in full-size image coordinates."""
        result: np.ndarray = self.plan.corners / self.scale
        return result


def start(calibration: Calibration, *, reduce: int = 2, reuse: bool = True) -> TrackState:
    """The reader's state before its first frame: what the calibration knows."""
    settings = calibration.thresholds
    w, h = calibration.image_size
    size = (w // reduce, h // reduce)
    scale = size[0] / w
    k, dist = lens_of(calibration, scale)
    corners = np.array(calibration.corners, np.float64) * scale
    plan = make_plan(settings, corners, size, k, dist)
    ring = plan.sampling
    view = _view_of(calibration, ring.side)
    blocks = view_blocks(ring.side, settings.reuse_block)
    return TrackState(
        calibration=calibration, settings=settings, reduce=reduce, reuse=reuse, size=size,
        scale=scale, k=k, dist=dist, inner=round(settings.margin_cells * settings.cell_px),
        model=calibration.colours, background=background_of(calibration),
        border=_border_of(calibration, ring.ring_xy),
        outer=_border_of(calibration, ring.ring_outer_xy), view=view,
        print_grey=None if view is None else cv2.cvtColor(view.image, cv2.COLOR_BGR2GRAY),
        print_odd=None, print_steady=0, plan=plan, blocks=blocks,
        block_cells=blocks_near_cells(settings, ring, blocks), reference=None,
        reference_grey=None, lines=None, offsets=None, steady_offsets=0, bumps=0, steady=0,
        last_odd=None, still=None, last_blocks=None, view_still=False, last_occluded=False,
        moving=0, hidden_still=0, next_look=settings.nudge_frames, clear_codes=None,
        last_codes=None, kept=None, same_reads=0, reuses=0, reused=0)


def update(state: TrackState, frame: np.ndarray | bytes, *, source: str = "frame"
           ) -> tuple[TrackState, Observation]:
    """Read one frame (a BGR array at the calibration's size, or encoded bytes; `source`
    names it in errors) from `state`: the state after it, and its reading. `state` is not
    changed: the same state and frame always give the same answer. A frame that cannot be
    read raises (`VisionError`) and leaves no state after it: the next frame is read from
    `state`."""
    step = _Step(state)
    obs = step.read(frame, source=source)
    return step.frozen(), obs


def measure_frame(state: TrackState, frame: np.ndarray | bytes, *, source: str = "frame"
                  ) -> tuple[TrackState, tuple[Plan, Measurement, ColourModel]]:
    """Measure one frame as `update` would (re-locating the board after a bump) and learn
    its colours: everything `observe` needs, and the state after it (its colour model and
    bare board unchanged: the frame is not read)."""
    step = _Step(state)
    measured = step.measure_frame(frame, source=source)
    return step.frozen(), measured


_FIELDS = tuple(f.name for f in fields(TrackState))


class BoardReader:
    """Reads frames of one camera quickly after calibration (the live loop's reader).

    Frames may be BGR arrays at the calibration's size or encoded bytes (JPEG/PNG), which are
    decoded at 1/`reduce` size. The reader checks each frame's border against a reference
    taken from the first frame; when most of the border no longer matches (the board or the
    camera moved) it locates the board again. Its colour model adapts slowly.

    A holder of the reader's state (`state`, a `TrackState`) for the live loop: each read
    is `update`.
    """

    def __init__(self, calibration: Calibration, *, reduce: int = 2, reuse: bool = True
                 ) -> None:
        self.state = start(calibration, reduce=reduce, reuse=reuse)

    def read(self, frame: np.ndarray | bytes, *, source: str = "frame") -> Observation:
        """Read one frame (BGR array at calibration size, or encoded bytes); `source`
        names it in errors."""
        self.state, obs = update(self.state, frame, source=source)
        return obs

    def measure_frame(self, frame: np.ndarray | bytes, *, source: str = "frame"
                      ) -> tuple[Plan, Measurement, ColourModel]:
        """See `measure_frame`: the reader's colour model is not changed."""
        self.state, measured = measure_frame(self.state, frame, source=source)
        return measured

    @property
    def calibration(self) -> Calibration:
        return self.state.calibration

    @property
    def settings(self) -> Thresholds:
        return self.state.settings

    @property
    def reduce(self) -> int:
        return self.state.reduce

    @property
    def model(self) -> ColourModel | None:
        return self.state.model

    @property
    def bumps(self) -> int:
        return self.state.bumps

    @property
    def reused(self) -> int:
        return self.state.reused

    @property
    def corners(self) -> np.ndarray:
        """The grid corners now in use, in full-size image coordinates."""
        return self.state.corners


class _Step:
    """One `update` at work: a copy of the state's fields as attributes, which the step's
    methods read and replace as the frame is read (never changing an array in place: the
    arrays are the state's own), made a `TrackState` again at the end (`frozen`)."""

    def __init__(self, state: TrackState) -> None:
        for name in _FIELDS:
            setattr(self, name, getattr(state, name))

    def frozen(self) -> TrackState:
        return TrackState(**{name: getattr(self, name) for name in _FIELDS})


    def measure_frame(self, frame: np.ndarray | bytes, *, source: str = "frame"
                      ) -> tuple[Plan, Measurement, ColourModel]:
        """Measure one frame (re-locating the board after a bump) and learn its colours:
        everything `observe` needs. The reader's own colour model is not changed."""
        image = self._image(frame, source)
        return self._measured(image, measure(self.settings, self.plan, image, even=False))

    def _measured(self, image: np.ndarray, m: Measurement
                  ) -> tuple[Plan, Measurement, ColourModel]:
        """`measure_frame` of a frame measured (`measure` with `even` False) with the plan
        in use."""
        if not self._moved(m):
            self.moving = 0
        elif self.view_still or self.moving >= self.settings.moving_frames:
            m = self._relocate(image)
            self.moving = 0
        else:
            # Still shaking: the board found now would not be where it comes to rest.
            self.moving += 1
        m = self._against_border(m)
        if self.hidden_still >= self.next_look:
            m = self._look_again(image, m)
        m = relit(self.settings, self.plan, m, self.border)
        m = replace(m, background=self.background, bare_view=self.view,
                    shade=make_shade(m.sub_lab, self.background))
        m = replace(m, print_likeness=print_likeness(self.settings, self.plan, m,
                                                                self.print_grey))
        self._settle_print(m)
        model = learn_colours(self.settings, m.sub_lab, lab3(m.ring_lab), self.model,
                              self.background, m.shade, m.cells_lab)
        return self.plan, m, model

    def read(self, frame: np.ndarray | bytes, *, source: str = "frame") -> Observation:
        """Read one frame (BGR array at calibration size, or encoded bytes); `source`
        names it in errors."""
        with one_blas_thread():
            image = self._image(frame, source)
            topdown = warp_topdown(self.plan.sampling, image)
            ii = integral(topdown)
            lines = grid_profiles(ii, self.inner)
            if self._lines_moved(lines) and self._nudge(image):
                topdown = warp_topdown(self.plan.sampling, image)
                ii = integral(topdown)
                lines = grid_profiles(ii, self.inner)
                self._lines_moved(lines)
            shifted = self.steady_offsets > 0
            blocks = box_means(ii, self.plan.sampling.index(self.blocks))
            last, self.last_blocks = self.last_blocks, blocks
            change = (np.abs(blocks - last) if last is not None and last.shape == blocks.shape
                      else None)  # (n blocks, 3): from the frame before
            self.view_still = (change is not None
                                and float(change.max()) < self.settings.reuse_levels)
            moved = self._moved_cells(change)
            if not (self.view_still and self.last_occluded):
                self.hidden_still = 0
            else:
                self.hidden_still += 1
            kept = self._reusable(blocks if self.reuse and not shifted else None)
            if kept is not None:
                self.reused += 1
                self.reuses += 1
                return replace(kept, moved=moved)
            bumps = self.bumps
            plan, m, model = self._measured(
                image, measure_view(self.settings, self.plan, topdown, ii, even=False))
            obs, reading, model = observe(self.settings, plan, m, model)
        if (shifted or self.moving) and self.bumps == bumps and not obs.occluded:
            # The camera or the board has moved: by a fraction of a cell (the grid's border
            # samples may still lie on the border, but the edge cells take in some of it),
            # or by more, and the view is still shaking.
            obs = replace(obs, occluded=True)
        obs = replace(obs, moved=moved)
        self.last_codes = reading.codes.copy()
        self.last_occluded = obs.occluded
        if self.reference is None and not obs.occluded and self.bumps == bumps:
            # The border as the first frame nothing hides shows it: the bump check's
            # strips and the grey levels `_look_again` lines the border up with.
            self.reference = ring_strips(plan, m.topdown, m.slopes)
            self.reference_grey = None if m.slopes is None else m.slopes.image
            self.lines = lines
        if not obs.occluded:
            self.clear_codes = self.last_codes
            self.next_look = self.settings.nudge_frames
        if self.model is None:
            self.model = model
        elif not obs.occluded:
            self.model = blend_colours(self.settings, self.model, model)
            self.background = follow_background(self.settings, self.background, m, obs,
                                                  reading)
        scaled = tuple((x / self.scale, y / self.scale) for x, y in obs.corners)
        obs = replace(obs, corners=scaled)
        self._remember(blocks if self.bumps == bumps else None, m, obs)
        return obs

    def _moved_cells(self, change: np.ndarray | None) -> frozenset[Cell]:
        """The cells near which the top-down view's blocks changed by `stir_levels` or more
        (`change`: (n blocks, 3) from the frame before; None when there is no frame before
        to compare, and then every cell)."""
        if change is None:
            return ALL_CELLS
        # Channel by channel and by a product: numpy's reductions along short rows, and
        # over the rows picked out, take several times as long.
        near = (row_max(change) >= self.settings.stir_levels).astype(np.float32) @ self.block_cells
        return frozenset((int(i) % SIZE, int(i) // SIZE) for i in np.flatnonzero(near > 0))

    def _lines_moved(self, lines: np.ndarray) -> bool:
        """Follow where the board's lines in this frame (`grid_profiles`) lie from where the
        first clear frame showed them; True when they have lain `shift_px` or more off
        them, in the same place, for `shift_still_frames` frames running."""
        if self.lines is None:
            self.offsets, self.steady_offsets = None, 0
            return False
        offsets = grid_offsets(self.lines, lines, self.settings.shift_reach)
        last, self.offsets = self.offsets, offsets
        if float(np.abs(offsets).max()) < self.settings.shift_px:
            self.steady_offsets = 0
        elif (last is not None
              and float(np.abs(offsets - last).max()) <= self.settings.shift_steady_px):
            self.steady_offsets += 1
        else:
            self.steady_offsets = 1
        return self.steady_offsets > self.settings.shift_still_frames

    def _nudge(self, image: np.ndarray) -> bool:
        """Move the grid by where the board's lines lie (`_offsets`): the camera was
        knocked by a fraction of a cell and has come to rest. The border band is then
        lined up with the first clear frame's (`realigned`, from this close start), which
        also takes the turn and the tilt the lines' shifts only approximate. What was
        learned of the board and its border (in the top-down view's own terms) still
        holds, and so do the first clear frame's lines, which the next frames are held
        to. Returns whether the grid moved."""
        assert self.offsets is not None
        corners = nudged_corners(self.settings, self.plan, self.offsets)
        if corners is None:
            return False
        self.bumps += 1
        self._follow(corners)
        if self.reference_grey is not None:
            grey = cv2.cvtColor(warp_topdown(self.plan.sampling, image), cv2.COLOR_BGR2GRAY)
            found = realigned(self.settings, self.plan, self.reference_grey, grey)
            if found is not None and found[1] >= self.settings.nudge_min_px:
                self._follow(found[0])
        return True

    def _follow(self, corners: np.ndarray) -> None:
        """`_adopt` these corners, keeping the first clear frame's border and lines."""
        kept = self.lines, self.reference, self.reference_grey
        self._adopt(corners)
        self.lines, self.reference, self.reference_grey = kept

    def _reusable(self, blocks: np.ndarray | None) -> Observation | None:
        """The last reading, when this frame (its top-down view's `blocks`, see
        `view_blocks`) may be given it without being read: the board has read the same
        for `reuse_after` full reads running, nothing hid it or crossed its border, this
        frame looks as the last one read to within `reuse_levels` in every block, and
        fewer than `reuse_limit` frames running have been given it."""
        if (blocks is None or self.kept is None or self.same_reads < self.settings.reuse_after
                or self.reuses >= self.settings.reuse_limit):
            return None
        before, obs = self.kept
        return obs if float(np.abs(blocks - before).max()) < self.settings.reuse_levels else None

    def _remember(self, blocks: np.ndarray | None, m: Measurement, obs: Observation) -> None:
        """Keep a frame read in full (its blocks, None after a bump) for `_reusable`."""
        self.reuses = 0
        border = [m.ring_outliers, m.ring_shadows, m.ring_outer_odd]
        quiet = (blocks is not None and not obs.occluded and not obs.occluded_cells
                 and not any(b is not None and b.any() for b in border))
        if not quiet or blocks is None:
            self.kept, self.same_reads = None, 0
            return
        kept = self.kept
        same = (kept is not None and kept[1].cells == obs.cells
                and kept[1].bridges == obs.bridges
                and float(np.abs(blocks - kept[0]).max()) < self.settings.reuse_levels)
        self.same_reads = self.same_reads + 1 if same else 1
        self.kept = (blocks, obs)

    def _image(self, frame: np.ndarray | bytes, source: str) -> np.ndarray:
        if isinstance(frame, bytes | bytearray | memoryview):
            image = decode_image(bytes(frame), reduce=self.reduce, source=source)
            if (image.shape[1], image.shape[0]) == self.size:
                return image
            # Not the calibration's size: decoded whole, the error names its real size.
            frame = decode_image(bytes(frame), source=source)
        check_image(frame, source=source)
        image = frame
        if (image.shape[1], image.shape[0]) != self.size:
            if (image.shape[1], image.shape[0]) != tuple(self.calibration.image_size):
                check_size(self.calibration, (image.shape[1], image.shape[0]))
            image = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA)
        return image

    def _look_again(self, image: np.ndarray, m: Measurement) -> Measurement:
        """Line the board up again after `nudge_frames` frames running flagged as hidden
        with nothing moving: a knock that moved the camera or the board by a fraction of
        a cell leaves the bump check's strips alike but puts the border's samples on the
        grid line or past the board's edge, and every frame would be flagged (and after a
        bump found while the view still shook, the board found then may be off). The
        border band of the top-down view is aligned with that of the first clear frame
        (see `realigned`), and the corners moved with it when it has moved by
        `nudge_min_px` or more; without that frame, the board is located afresh and taken
        when the border there looks as the bare border did (at least three samples off it
        now, at most a third as many there). The bare border and the bare board seen
        before still hold (the top-down view is the board's own). Returns the frame
        measured anew then, else `m` (and the next look, while no frame is read unhidden,
        comes twice as late: a hand at rest over the board)."""
        self.next_look = self.hidden_still + (self.next_look + 1) * 2
        grey = None if m.slopes is None else m.slopes.image
        if self.reference_grey is not None and grey is not None:
            found = realigned(self.settings, self.plan, self.reference_grey, grey)
            if found is not None:
                if found[1] < self.settings.nudge_min_px:
                    return m  # lined up: something else is flagged
                self.bumps += 1
                self._adopt(found[0])
                return self._against_border(measure(self.settings, self.plan, image,
                                                    even=False))
        border, outer = self._bare_border()
        if border is None:
            return m
        changed = _border_changed(self.settings, m, border, outer)
        if changed < 3:
            return m
        try:
            corners = orient_corners(locate_board(self.settings, image), self.calibration.a1,
                                     self.size)
        except VisionError:
            return m
        plan = make_plan(self.settings, corners, self.size, self.k, self.dist)
        there = measure(self.settings, plan, image, even=False)
        if _border_changed(self.settings, there, border, outer) * 3 > changed:
            return m
        self.bumps += 1
        self._adopt(corners, plan)
        self.border, self.outer = border, outer
        return self._against_border(there)

    def _bare_border(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The bare border to judge a board found again by: the one followed so far, else
        the calibration's."""
        if self.border is not None:
            return self.border, self.outer
        return self._calibration_border()

    def _calibration_border(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The calibration's bare border (whole boxes, outer halves) at the plan's ring."""
        ring = self.plan.sampling
        return (_border_of(self.calibration, ring.ring_xy),
                _border_of(self.calibration, ring.ring_outer_xy))

    def _adopt(self, corners: np.ndarray, plan: Plan | None = None) -> None:
        """Read with the grid at these corners from now on (the board was found again)."""
        self.plan = plan if plan is not None else make_plan(
            self.settings, corners, self.size, self.k, self.dist)
        ring = self.plan.sampling
        if self.border is not None and len(self.border) != len(ring.ring_boxes):
            # Other border boxes are in view now: the calibration's bare border for them.
            self.border, self.outer = self._calibration_border()
        if self.outer is not None and len(self.outer) != len(ring.ring_outer_boxes):
            self.outer = None
        self.blocks = view_blocks(ring.side, self.settings.reuse_block)
        self.block_cells = blocks_near_cells(self.settings, ring, self.blocks)
        self.kept, self.same_reads = None, 0
        self.reference = self.reference_grey = self.lines = None
        self.offsets, self.steady_offsets = None, 0
        self.steady, self.still = 0, None
        self.last_blocks, self.hidden_still = None, 0

    def _moved(self, m: Measurement) -> bool:
        if self.reference is None:
            return False
        now = ring_strips(self.plan, m.topdown, m.slopes)
        if now.shape != self.reference.shape:
            # Kept from a grid that sampled other border strips (`_follow`): nothing to
            # compare with, so the next clear frame's strips are taken as the reference.
            self.reference = None
            return False
        score = strip_correlation(self.reference, now)
        misaligned = float((score < 0.5).mean())
        return misaligned > self.settings.bump_misaligned_fraction

    def _against_border(self, m: Measurement) -> Measurement:
        """Judge the border against the bare border seen before (the calibration's, or
        the first clear frame's), which knows a fixed shadow from an arm. The reference
        follows slow changes; after a re-location it is taken anew."""
        outer = m.ring_outer_bgr
        if self.border is None:
            if not m.ring_outliers.any():
                self.border = m.ring_bgr.copy()
                self.outer = None if outer is None else outer.copy()
            return m
        limit = self.settings.ring_outlier_error
        change = border_change_levels(self.settings, m.ring_bgr, self.border, limit)
        odd, shadows = split_changes(*change, self.settings.odd_levels)
        outer_odd = outer_shadows = None
        levels = change[0]
        if self.outer is not None and outer is not None:
            outer_change = border_change_levels(self.settings, outer, self.outer, limit)
            outer_odd, outer_shadows = split_changes(*outer_change, self.settings.odd_levels)
            levels = np.maximum(levels, outer_change[0])
        faint = clear = None
        if odd.any():
            faint = np.logical_or(*split_changes(*change, self.settings.faint_levels)) & ~(
                odd | shadows)
            clear = split_changes(*change, self.settings.clear_levels)[0]
        if not (odd | shadows).any():
            rate = self.settings.adapt_rate
            self.border = (1 - rate) * self.border + rate * m.ring_bgr
            if self.outer is not None and outer is not None:
                self.outer = (1 - rate) * self.outer + rate * outer
            self.steady = 0
            self.still = None
        else:
            # The same difference for a long time with nothing moving is the room's light
            # changed (a lamp turned on, the sun moved), not an arm: take the border as it
            # is now. Nothing moves while the same samples stay changed, or while the
            # border looks as it did when the difference began: samples near the limit
            # come and go with the camera's noise, so the set alone may never settle. An
            # arm resting on the border is as still, but the cells it lies over do not
            # read as they did before it came (`_unchanged_near`).
            changed = odd | shadows
            seen = m.ring_bgr if outer is None else np.concatenate([m.ring_bgr, outer])
            same = self.last_odd is not None and np.array_equal(changed, self.last_odd)
            still = self.still is not None and border_unmoved(self.settings, seen, self.still)
            self.steady = self.steady + 1 if same or still else 0
            if not still:
                self.still = seen.copy()
            if outer_odd is not None:
                changed = changed | outer_odd
            if self.steady >= self.settings.border_settle_frames and self._unchanged_near(changed):
                self.border = m.ring_bgr.copy()
                self.outer = None if outer is None else outer.copy()
                self.steady = 0
                self.still = None
                odd = np.zeros_like(odd)
                shadows = np.zeros_like(shadows)
                outer_odd = outer_shadows = faint = clear = None
        self.last_odd = odd | shadows
        return replace(m, ring_outliers=odd, ring_shadows=shadows, ring_outer_odd=outer_odd,
                       ring_outer_shadows=outer_shadows, ring_faint=faint, ring_clear=clear,
                       ring_levels=levels)

    def _settle_print(self, m: Measurement) -> None:
        """Take the border's print as this frame shows it for the one to compare later
        frames with once it has differed from it beside the same border samples for
        `border_settle_frames` frames running, nothing moving, and the cells near them
        read as on the last frame nothing hid (`_unchanged_near`). Something put down on
        the table against the board's edge (the box, a cup, the tiles not yet played)
        changes the print's surroundings there for good and would flag every frame after;
        a hand hiding the print lies over the cells next to it, or moves."""
        if m.print_likeness is None:
            return
        unlike = m.print_likeness < self.settings.print_likeness
        if not unlike.any():
            self.print_odd, self.print_steady = None, 0
            return
        same = self.print_odd is not None and np.array_equal(unlike, self.print_odd)
        self.print_steady = self.print_steady + 1 if same and self.view_still else 0
        self.print_odd = unlike
        if (self.print_steady >= self.settings.border_settle_frames
                and self._unchanged_near(unlike)):
            self.print_grey = grey_view(m).copy()
            self.print_odd, self.print_steady = None, 0

    def _unchanged_near(self, changed: np.ndarray) -> bool:
        """Whether the cells within `border_reach` of these border samples read as they did on
        the last frame nothing hid (the frame before this one is the one compared: the
        border has been still for seconds). A hand or an arm that rests over the border
        lies over the cells next to where it crosses, and is read as tiles or as hidden
        there; a lamp turned on changes the border and none of the cells.

        Without a clear frame yet (a calibration made in another day's light, or a hand
        there from the first frame) there is no reading to compare with: then none of
        those cells may be one the colour votes cannot read (`UNKNOWN`). A hand resting
        over the border leaves some of them unreadable; a lamp's light leaves them
        readable."""
        if self.last_codes is None:
            return True
        sampling = self.plan.sampling
        far = np.abs(sampling.cell_xy[:, None] - sampling.ring_xy[changed][None]).max(axis=2)
        near = (far <= self.settings.border_reach).any(axis=1)
        if self.clear_codes is None:
            return not bool((self.last_codes[near] == UNKNOWN).any())
        return bool(np.array_equal(self.last_codes[near], self.clear_codes[near]))

    def _lined_up(self, lines: np.ndarray | None, m: Measurement) -> bool:
        """Whether the board's lines in the frame measured (`m`) lie where `lines` (see
        `grid_profiles`) put them, to `shift_px`."""
        if lines is None:
            return False
        now = grid_profiles(m.integral, self.inner)
        offsets = grid_offsets(lines, now, self.settings.shift_reach)
        return float(np.abs(offsets).max()) < self.settings.shift_px

    def _relocate(self, image: np.ndarray) -> Measurement:
        """Locate the board afresh (a bump); returns the frame measured there."""
        self.bumps += 1
        found = locate_board(self.settings, image)
        kept = self.lines, self.reference_grey
        self._adopt(orient_corners(found, self.calibration.a1, self.size))
        m = measure(self.settings, self.plan, image, even=False)
        lines, grey = kept
        if grey is not None and m.slopes is not None:
            # Located from scratch, the corners can lie a few pixels off those the board
            # was read with: line the border band up with the first clear frame's.
            aligned = realigned(self.settings, self.plan, grey, m.slopes.image)
            if aligned is not None:
                plan = make_plan(self.settings, aligned[0], self.size, self.k, self.dist)
                there = measure(self.settings, plan, image, even=False)
                if self._lined_up(lines, there) or not self._lined_up(lines, m):
                    self._adopt(aligned[0], plan)
                    m = there
        if self._lined_up(lines, m):
            # The board's own view lines up with the one before: what was learned of its
            # bare border and board holds, whatever the light on the border does now.
            self.lines, self.reference_grey = kept
            return m
        for border, outer in ((self.border, self.outer), self._calibration_border()):
            if border is not None and _border_changed(self.settings, m, border, outer) <= max(
                    2, len(border) // 10):
                # The border there looks as the bare border did: the camera moved, not
                # the light; what was learned of the bare board still holds.
                self.border, self.outer = border, outer
                return m
        self.border = None
        self.outer = None
        # The light falls on the board differently now: learn the bare board again.
        self.background = np.full_like(self.background, np.nan)
        self.view = None
        return m


ALL_CELLS = frozenset((f, r) for r in range(SIZE) for f in range(SIZE))

def blocks_near_cells(settings: Thresholds, sampling: SamplingPlan, blocks: np.ndarray
                      ) -> np.ndarray:
    """(n blocks, 100) float32, 1 where a block of the top-down view (`view_blocks`) lies
    within `stir_reach` of a cell, as the cell's tile top appears (`cell_mid_xy`), else 0
    (numbers, for a product: see `BoardReader._note_moves`)."""
    px, margin = settings.cell_px, settings.margin_cells
    cx = (blocks[:, 0] + blocks[:, 2]) / 2.0 / px - margin
    cy = margin + SIZE - (blocks[:, 1] + blocks[:, 3]) / 2.0 / px
    mid = sampling.cell_mid_xy
    near = ((np.abs(cx[:, None] - mid[None, :, 0]) <= settings.stir_reach)
            & (np.abs(cy[:, None] - mid[None, :, 1]) <= settings.stir_reach))
    return near.astype(np.float32)


def view_blocks(side: int, block: int) -> np.ndarray:
    """(n, 4) int boxes tiling a `side`-pixel-square top-down view in about `block`-pixel
    squares (for `box_means`)."""
    n = max(side // block, 1)
    edges = np.arange(n + 1) * side // n
    x0, y0 = np.meshgrid(edges[:-1], edges[:-1])
    x1, y1 = np.meshgrid(edges[1:], edges[1:])
    return np.stack([x0.ravel(), y0.ravel(), x1.ravel(), y1.ravel()], axis=1).astype(np.int64)


def with_view(calibration: Calibration, image: np.ndarray) -> Calibration:
    """The calibration with its photo's top-down view and light field (`Calibration.view`),
    as a reader of it warps and measures the photo."""
    m = BoardReader(calibration).measure_frame(image)[1]
    png = cv2.imencode(".png", m.topdown)[1]  # a uint8 BGR image always encodes
    return replace(calibration, view=base64.b64encode(png.tobytes()).decode("ascii"),
                   view_light=tuple(float(v) for v in m.light_coef.ravel()))


def _view_of(calibration: Calibration, side: int) -> BareView | None:
    """The calibration's view of the bare board (None without one, or when it is not an
    image of the top-down view's size: then the second look does without it)."""
    if calibration.view is None or calibration.view_light is None or calibration.board is None:
        return None
    image = cv2.imdecode(np.frombuffer(base64.b64decode(calibration.view), np.uint8),
                         cv2.IMREAD_COLOR)
    if image is None or image.shape != (side, side, 3):
        return None
    known = np.array([row is not None for row in calibration.board])
    return BareView(image, np.array(calibration.view_light, np.float64).reshape(6, 3), known)


def _border_changed(settings: Thresholds, m: Measurement, border: np.ndarray,
                    outer: np.ndarray | None) -> int:
    """How many of a frame's border samples (whole boxes and outer halves) look off this
    bare border (see `border_changes`)."""
    if border.shape != m.ring_bgr.shape:
        return len(m.ring_bgr) + len(border)  # other boxes in view: nothing to compare
    limit = settings.ring_outlier_error
    odd, shadows = border_changes(settings, m.ring_bgr, border, limit)
    count = int((odd | shadows).sum())
    if (outer is not None and m.ring_outer_bgr is not None
            and outer.shape == m.ring_outer_bgr.shape):
        count += int(border_changes(settings, m.ring_outer_bgr, outer, limit)[0].sum())
    return count


def bare_cells(obs: Observation, reading: CellReading, sure: float = 0.0) -> np.ndarray:
    """(100,) cells read as bare board (at least this sure), with nothing hiding them and
    no bridge over them or standing on them."""
    bare = (reading.codes == EMPTY) & (reading.confidence >= sure)
    for f, r in obs.occluded_cells:
        bare[r * SIZE + f] = False
    for a, b in obs.bridges:
        for f, r in (a, b, *cells_under(a, b)):
            bare[r * SIZE + f] = False
    return bare


def follow_background(
    settings: Thresholds, background: np.ndarray, m: Measurement, obs: Observation,
    reading: CellReading,
) -> np.ndarray:
    """The bare board as it looks now: cells surely bare (no bridge over them) move towards
    this frame's colours at the colour model's rate (the light changes slowly); a cell not
    known yet (a tile stood there at calibration) is taken as it is."""
    bare = bare_cells(obs, reading, settings.background_sure)
    out = background.copy()
    unknown = np.isnan(out).any(axis=(1, 2))
    rate = settings.adapt_rate
    follow = bare & ~unknown
    out[follow] = (1 - rate) * out[follow] + rate * m.sub_lab[follow]
    out[bare & unknown] = m.sub_lab[bare & unknown]
    return out


def _border_of(calibration: Calibration, xy: np.ndarray) -> np.ndarray | None:
    """The calibration's bare border at these board points (the centres of the plan's
    ring boxes, or of their outer halves), or None when it has none or not for all."""
    if not calibration.ring:
        return None
    known = {(round(x, 2), round(y, 2)): (b, g, r) for x, y, b, g, r in calibration.ring}
    rows = [known.get((round(float(x), 2), round(float(y), 2))) for x, y in xy]
    if any(row is None for row in rows):
        return None
    return np.array(rows, np.float64)
