"""The reader's quick paths give the numbers of the plain ones they stand in for."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from contracts.calibration import default_thresholds
from tests.vision_drawing import draw_board, place_in_scene
from vision.classify import (
    median_along,
    row_max,
    row_mean,
    row_min,
    row_sum,
    squared_lengths,
)
from vision.features import (
    BoxIndexes,
    box_index,
    box_means,
    design_at,
    integral,
    light_field,
    texture,
    warp_topdown,
)
from vision.measure import make_plan, ring_strips
from vision.patches import BIAS_ROWS, Conv, columns

BOARD = ["L.D.......", "L.D.......", "..........", "....LL..DD", "D.........",
         "D......L..", "D......L..", "..........", "L........D", ".........."]
QUAD = [(300, 60), (980, 80), (1010, 700), (270, 690)]


def _scene() -> tuple[np.ndarray, np.ndarray]:
    """A drawn board with camera noise, and its grid corners in a1, j1, j10, a10 order."""
    image, grid = place_in_scene(draw_board(BOARD), QUAD)
    noise = np.random.default_rng(5).normal(0, 6, image.shape)
    tl, tr, br, bl = grid.astype(np.float64)
    return np.clip(image + noise, 0, 255).astype(np.uint8), np.array([bl, br, tr, tl])


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(0, 6), count=st.integers(1, 12), axis=st.integers(0, 1),
       wide=st.booleans(), seed=st.integers(0, 2**16))
def test_median_along_is_numpy_s_median(rows: int, count: int, axis: int, wide: bool,
                                        seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (count, rows + 1, 3) if axis == 0 else (rows + 1, count, 3)
    values = rng.normal(50, 30, shape).astype(np.float64 if wide else np.float32)
    values[..., 0] = np.round(values[..., 0])  # ties, as whole grey levels have
    got, want = median_along(values, axis), np.median(values, axis=axis)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 40), count=st.integers(2, 12), lead=st.integers(1, 3),
       wide=st.booleans(), seed=st.integers(0, 2**16))
def test_row_reductions_are_numpy_s_to_the_bit(rows: int, count: int, lead: int, wide: bool,
                                               seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(0, 30, (lead, rows, count)).astype(np.float64 if wide else np.float32)
    for mine, numpy_s in ((row_sum, np.sum), (row_mean, np.mean), (row_max, np.max),
                          (row_min, np.min)):
        got, want = mine(values), numpy_s(values, axis=-1)
        assert got.dtype == want.dtype
        assert np.array_equal(got, want)
    # Along a middle axis, as a view with that axis moved last.
    middle = np.moveaxis(values, 2, 1)
    assert np.array_equal(row_mean(np.moveaxis(middle, 1, 2)), middle.mean(axis=1))
    flags = values > 0  # counted
    assert np.array_equal(row_sum(flags), flags.sum(axis=-1))
    assert row_sum(flags).dtype == flags.sum(axis=-1).dtype


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 30), min_size=0, max_size=3), wide=st.booleans(),
       layout=st.sampled_from(["plain", "every other", "transposed"]),
       seed=st.integers(0, 2**16))
def test_squared_lengths_are_einsum_s_to_the_bit(shape: list[int], wide: bool, layout: str,
                                                 seed: int) -> None:
    rng = np.random.default_rng(seed)
    diff = rng.normal(0, 40, (*shape, 3)).astype(np.float64 if wide else np.float32)
    diff[rng.random(diff.shape) < 0.02] = np.nan  # the bare board where it is not known
    if layout == "every other" and shape:
        diff = diff[::2]
    elif layout == "transposed":
        diff = np.moveaxis(np.ascontiguousarray(np.moveaxis(diff, -1, 0)), 0, -1)
    got, want = squared_lengths(diff), np.einsum("...k,...k->...", diff, diff)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)


def test_the_top_down_view_s_sums_are_those_of_the_plain_float_paths() -> None:
    image, corners = _scene()
    plan = make_plan(default_thresholds(), corners, (image.shape[1], image.shape[0]))
    sampling = plan.sampling
    assert sampling.fixed_maps is not None
    topdown = warp_topdown(sampling, image)
    assert np.array_equal(topdown, cv2.remap(image, sampling.map_x, sampling.map_y,
                                             cv2.INTER_LINEAR))
    assert np.array_equal(integral(topdown), cv2.integral(topdown, sdepth=cv2.CV_64F))
    # summed in integers, the box means are float64's to the last bit
    assert np.array_equal(box_means(integral(topdown), sampling.cell_boxes),
                          box_means(cv2.integral(topdown, sdepth=cv2.CV_64F),
                                    sampling.cell_boxes))

    spread, edges, slopes = texture(topdown, sampling)
    grey = cv2.cvtColor(topdown, cv2.COLOR_BGR2GRAY)
    total, squares = cv2.integral2(grey.astype(np.float32), sdepth=cv2.CV_64F)
    assert np.array_equal(slopes.grey, total)
    assert np.array_equal(box_means(slopes.grey, sampling.cell_boxes),
                          box_means(total, sampling.cell_boxes))
    assert slopes.image is not None and np.array_equal(slopes.image, grey)
    gx = cv2.Sobel(grey.astype(np.float32), cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey.astype(np.float32), cv2.CV_32F, 0, 1, ksize=3)
    assert np.array_equal(slopes.gradients,
                          cv2.integral(cv2.merge([gx, gy]), sdepth=cv2.CV_32F))
    mean = box_means(total, sampling.cell_boxes)
    variance = np.maximum(box_means(squares, sampling.cell_boxes) - mean ** 2, 0.0)
    assert np.array_equal(spread, (np.sqrt(variance) / np.maximum(mean, 8.0)).reshape(100, 9))
    assert edges.shape == (100, 5) and np.isfinite(edges).all()
    # The bump check's strips, gathered in one go, as shrunk square by square.
    assert plan.strip_pixels is not None and plan.strips is not None
    one_by_one = np.array([cv2.resize(grey[ya:yb, xa:xb].astype(np.float32), (12, 12),
                                      interpolation=cv2.INTER_AREA)
                           for ya, yb, xa, xb in plan.strips])
    assert np.array_equal(ring_strips(plan, topdown), one_by_one)
    assert np.array_equal(ring_strips(replace(plan, strip_pixels=None), topdown), one_by_one)


def test_boxes_laid_out_beforehand_give_the_same_means() -> None:
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (50, 60, 3), np.uint8)
    ii = integral(image)
    x0, y0 = rng.integers(0, 40, 200), rng.integers(0, 30, 200)
    boxes = np.column_stack([x0, y0, x0 + rng.integers(1, 20, 200), y0 + rng.integers(1, 20, 200)])
    plain = box_means(ii, boxes)
    assert np.array_equal(box_means(ii, box_index(boxes, ii.shape[1])), plain)
    pick = rng.integers(0, 200, 50)
    assert np.array_equal(box_means(ii, box_index(boxes, ii.shape[1]).pick(pick)), plain[pick])
    grey = cv2.integral(image[:, :, 0], sdepth=cv2.CV_64F)
    assert np.array_equal(box_means(grey, box_index(boxes, 61)), box_means(grey, boxes))
    # Kept once made, and several arrays laid out one after the other.
    indexes, other = BoxIndexes(), boxes[::-1].copy()
    assert indexes(61, boxes) is indexes(61, boxes)
    assert np.array_equal(box_means(ii, indexes(61, boxes, other)),
                          np.concatenate([plain, box_means(ii, other)]))
    with pytest.raises(ValueError, match="61 columns"):
        box_means(ii[:, :-1], indexes(61, boxes))


def test_the_light_field_is_the_same_for_a_ring_seen_again_or_another_ring() -> None:
    k = np.arange(10) + 0.5
    ring = np.concatenate([np.column_stack(p) for p in
                           ((k, np.full(10, -0.2)), (k, np.full(10, 10.2)),
                            (np.full(10, -0.2), k), (np.full(10, 10.2), k))])
    truth = np.array([[120.0, 130.0, 140.0], [-30.0, -25.0, -20.0], [10.0, 12.0, 8.0],
                      [5.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, -4.0]])
    seen = design_at(ring) @ truth
    seen[7] += 80.0  # an arm over one sample
    first, keep = light_field(default_thresholds(), seen, ring)
    again, keep_again = light_field(default_thresholds(), seen.copy(), ring.copy())
    assert np.array_equal(first, again) and np.array_equal(keep, keep_again)
    assert not keep[7] and keep.sum() == len(ring) - 1
    assert np.allclose(first, truth)
    # Another ring (fewer samples, in another order) is worked out anew, not taken from
    # the first one's.
    other = ring[::-1][:30]
    fitted, kept = light_field(default_thresholds(), design_at(other) @ truth, other)
    assert kept.all() and np.allclose(fitted, truth)


@pytest.mark.parametrize("stride", [1, 2])
def test_a_convolution_over_more_pixels_than_its_bias_is_laid_out_for(stride: int) -> None:
    rng = np.random.default_rng(stride)
    x = rng.normal(size=(3, 40, 40, 4)).astype(np.float32)
    weight = rng.normal(size=(8, 4, 3, 3)).astype(np.float32)
    bias = rng.normal(size=8).astype(np.float32)
    got = Conv(weight, bias, stride)(x)
    pixels = got.shape[0] * got.shape[1] * got.shape[2]
    assert stride == 2 or pixels > BIAS_ROWS
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = np.zeros(got.shape)
    for dy in range(3):
        for dx in range(3):
            window = padded[:, dy:dy + 40:stride, dx:dx + 40:stride]
            want += np.einsum("nhwc,oc->nhwo", window, weight[:, :, dy, dx])
    want = np.maximum(want + bias, 0.0)
    assert np.allclose(got, want, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 3), high=st.integers(3, 30), wide=st.integers(3, 30),
       channels=st.integers(1, 8), k=st.sampled_from([3, 5]), stride=st.integers(1, 3))
def test_a_convolution_s_windows_are_numpy_s_sliding_windows(
        count: int, high: int, wide: int, channels: int, k: int, stride: int) -> None:
    x = np.random.default_rng(high * wide).random((count, high, wide, channels), np.float32)
    pad = k // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    windows = sliding_window_view(padded, (k, k, channels), axis=(1, 2, 3))[
        :, ::stride, ::stride, 0]
    cols, (n, h, w) = columns(x, k, stride)
    assert (n, h, w) == windows.shape[:3]
    assert np.array_equal(cols, windows.reshape(n * h * w, -1))


def test_blas_runs_one_thread_inside_the_context_and_as_before_after() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    from vision.learned import one_blas_thread

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        with one_blas_thread():
            assert set(blas_threads()) <= {1}
            with one_blas_thread():  # nested: still one, and the outer one puts it back
                assert set(blas_threads()) <= {1}
            assert set(blas_threads()) <= {1}
        assert blas_threads() == before


def test_the_shade_worked_out_once_a_frame_is_used_only_for_its_own_arrays() -> None:
    from vision.classify import bare_in_shadow, make_shade
    from vision.learned import against_background

    rng = np.random.default_rng(11)
    background = rng.normal([70, 5, 20], 5, (100, 9, 3))
    background[:7] = np.nan  # not known there
    sub_lab = background * rng.uniform(0.5, 1.0, (100, 1, 1)) + rng.normal(0, 2, (100, 9, 3))
    sub_lab[:7] = rng.normal(50, 10, (7, 9, 3))
    shade = make_shade(sub_lab, background)
    assert shade is not None
    assert np.array_equal(bare_in_shadow(default_thresholds(), sub_lab, background, shade),
                          bare_in_shadow(default_thresholds(), sub_lab, background))
    assert np.array_equal(against_background(sub_lab, background, shade),
                          against_background(sub_lab, background))
    # Made of other arrays (an older frame's), it is not used.
    other = make_shade(sub_lab + 3.0, background)
    assert np.array_equal(against_background(sub_lab, background, other),
                          against_background(sub_lab, background))
    assert bare_in_shadow(default_thresholds(), sub_lab, background, shade).any()
    assert make_shade(sub_lab, None) is None


_LAB = st.tuples(st.floats(0, 100), st.floats(-60, 60), st.floats(-60, 60))


@settings(max_examples=80, deadline=None)
@given(empty=_LAB, light=_LAB, dark=_LAB, count=st.integers(1, 60), seed=st.integers(0, 99))
def test_both_tile_colours_at_once_give_each_colours_own_numbers(
    empty: tuple[float, float, float], light: tuple[float, float, float],
    dark: tuple[float, float, float], count: int, seed: int,
) -> None:
    from contracts.calibration import ColourModel
    from vision.learned import against_colours_rows

    rng = np.random.default_rng(seed)
    lab = np.column_stack([rng.uniform(0, 100, count), rng.uniform(-60, 60, (count, 2))])
    lab[0] = light  # a sample on a tile colour: its own distance 0
    both = against_colours_rows(lab, ColourModel(empty=empty, ring=empty, light=light, dark=dark))
    alone = (against_colours_rows(lab, ColourModel(empty=empty, ring=empty, light=light)),
             against_colours_rows(lab, ColourModel(empty=empty, ring=empty, dark=dark)))
    for k in (0, 1):
        rows = [3 + 4 * k + i for i in range(4)] + [14 + k]
        assert np.array_equal(both[rows], alone[k][rows])
    assert np.array_equal(both[:3], alone[0][:3]) and np.array_equal(both[11:14], alone[1][11:14])
    # A colour not learned counts as far away.
    assert np.all(alone[0][7:9] == 3.0) and np.all(alone[0][15] == 1.0)
