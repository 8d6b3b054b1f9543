"""The patch network: its convolutions, its training, its patches and its place in the
pipeline (a second look at the cells the cell network is unsure of)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from contracts.calibration import Thresholds, default_thresholds
from lab.train_patches import (
    CLASSES,
    HARD_SETUPS,
    HIDDEN,
    LAYERS,
    PATCH_LAYERS,
    Trainer,
    hard_scenes,
    layer_list,
    main,
    train,
)
from vision.patches import (
    HALF,
    PATCH_MODEL,
    Conv,
    PatchNetwork,
    patch_network,
)


def _reference_conv(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, stride: int
                    ) -> np.ndarray:
    """The convolution written out as its sum, one output at a time."""
    out_ch, in_ch, k, _ = weight.shape
    pad = k // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    n, h, w, _ = x.shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = np.zeros((n, oh, ow, out_ch))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                window = padded[b, i * stride:i * stride + k, j * stride:j * stride + k]
                for o in range(out_ch):
                    total = bias[o]
                    for c in range(in_ch):
                        total += float((window[:, :, c] * weight[o, c]).sum())
                    out[b, i, j, o] = max(total, 0.0)
    return out


@pytest.mark.parametrize(("k", "stride", "shape"), [(3, 2, (2, 7, 9, 3)), (5, 2, (1, 8, 8, 2)),
                                                     (3, 1, (1, 5, 6, 4))])
def test_a_convolution_is_the_sum_it_stands_for(k: int, stride: int, shape: tuple[int, ...]
                                                ) -> None:
    rng = np.random.default_rng(k * 10 + stride)
    x = rng.normal(size=shape)
    weight = rng.normal(size=(3, shape[3], k, k))
    bias = rng.normal(size=3)
    got = Conv(weight, bias, stride)(x)
    assert got.shape == _reference_conv(x, weight, bias, stride).shape
    assert np.allclose(got, _reference_conv(x, weight, bias, stride))


def test_the_training_gradients_are_the_loss_s_slopes() -> None:
    rng = np.random.default_rng(1)
    trainer = Trainer(rng)
    trainer.params = {k: v.astype(np.float64) for k, v in trainer.params.items()}
    x = rng.normal(0, 0.5, (3, 2 * HALF, 2 * HALF, 3))
    logp = np.log(rng.dirichlet(np.ones(4), 3))
    y, weight = np.array([0, 2, 1]), np.array([1.0, 3.0, 1.0])
    _, grads = trainer.gradients(x, logp, y, weight)
    checked = 0
    for name, param in trainer.params.items():
        for _ in range(3):
            at = tuple(int(rng.integers(0, s)) for s in param.shape)
            old = param[at]
            param[at] = old + 1e-6
            up = trainer.gradients(x, logp, y, weight)[0]
            param[at] = old - 1e-6
            down = trainer.gradients(x, logp, y, weight)[0]
            param[at] = old
            slope = (up - down) / 2e-6
            assert abs(grads[name][at] - slope) <= 1e-6 + 1e-4 * abs(slope), name
            checked += abs(slope) > 1e-6
    assert checked > 10  # most of them were not flat


def _squares(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Noisy bare patches (class 0), and patches with a slightly lighter (1) or darker (2)
    square a little off-centre: a tile whose colour is close to the board's."""
    y = rng.integers(0, CLASSES, n)
    x = rng.normal(0, 0.06, (n, 2 * HALF, 2 * HALF, 3)).astype(np.float32)
    for i in range(n):
        if y[i]:
            dx, dy = rng.integers(-3, 4, 2)
            top, left = HALF - 10 + dy, HALF - 10 + dx
            x[i, top:top + 20, left:left + 20] += 0.12 if y[i] == 1 else -0.12
            x[i, top:top + 20, left] -= 0.3  # its edge's shadow
    return x, y


@pytest.mark.slow
def test_training_learns_to_see_a_tile_the_cell_network_cannot(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    x, y = _squares(rng, 1200)
    # the cell network's probabilities say nothing: the patch alone must tell
    flat = np.full((len(y), 4), 0.25, np.float32)
    data = {"x": np.clip(np.round((x + 1) * 128), 0, 255).astype(np.uint8), "p": flat, "y": y}
    net = train(data, epochs=6, batch=64, layers=LAYERS, hidden=HIDDEN)  # narrow: quicker
    test_x, test_y = _squares(rng, 300)
    probs = net.proba(test_x, np.full((300, 4), 0.25))
    assert probs.shape == (300, 4)
    assert (probs[:, :3].argmax(axis=1) == test_y).mean() > 0.9
    net.save(tmp_path / "p.npz")
    again = PatchNetwork.load(tmp_path / "p.npz")
    assert np.allclose(again.proba(test_x, flat[:300]), probs)


def test_the_hidden_share_stays_the_cell_network_s() -> None:
    net = patch_network()
    assert net is not None
    rng = np.random.default_rng(3)
    x = rng.normal(0, 0.2, (5, 2 * HALF, 2 * HALF, net.channels)).astype(np.float32)
    probs = rng.dirichlet(np.ones(4), 5)
    got = net.proba(x, probs)
    assert np.allclose(got[:, 3], probs[:, 3])
    assert np.allclose(got.sum(axis=1), 1.0)


def test_an_unsure_cell_is_read_again_in_its_patch_s_turns_and_mirror_images() -> None:
    net = patch_network()
    assert net is not None
    rng = np.random.default_rng(4)
    x = rng.normal(0, 0.3, (12, 2 * HALF, 2 * HALF, net.channels)).astype(np.float32)
    probs = rng.dirichlet(np.ones(4), 12) * [1, 1, 1, 0.2]
    probs /= probs.sum(axis=1, keepdims=True)
    once = net.proba(x, probs)
    mirrored = [once] + [net.proba(np.ascontiguousarray(v), probs)
                         for v in (x[:, :, ::-1], x[:, ::-1], x[:, ::-1, ::-1],
                                   np.rot90(x, 1, (1, 2)), np.rot90(x, 3, (1, 2)),
                                   x.transpose(0, 2, 1, 3),
                                   x[:, ::-1, ::-1].transpose(0, 2, 1, 3))]
    mean = np.mean(mirrored, axis=0)
    top = once[:, :3].max(axis=1) / once[:, :3].sum(axis=1)
    settings = default_thresholds()
    unsure = np.flatnonzero(top < settings.mirror_below)
    unsure = unsure[np.argsort(top[unsure], kind="stable")[:settings.mirror_looks]]
    assert 0 < len(unsure) < len(x)  # random patches: some sure, some not, for the test
    got = net.steady_proba(settings, x, probs)
    want = once.copy()
    want[unsure] = mean[unsure]
    assert np.allclose(got, want, atol=1e-6)
    assert not np.allclose(got[unsure], once[unsure])  # the mirror images did change them
    assert np.allclose(got[:, 3], probs[:, 3])
    assert np.allclose(got.sum(axis=1), 1.0)


def test_the_shipped_patch_network_loads_with_the_layers_training_makes() -> None:
    assert PATCH_MODEL.exists()
    net = patch_network()
    assert net is not None
    assert [(c.weight.shape[0], c.weight.shape[2]) for c in net.convs] == list(PATCH_LAYERS)


def test_the_layers_option_reads_channels_and_odd_kernels() -> None:
    assert layer_list("32:5,64:3,64:3") == PATCH_LAYERS
    for bad in ("32:4", "32", "a:3", "0:3", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            layer_list(bad)


def test_the_hard_scenes_are_the_hard_setups_next_scenes() -> None:
    from lab.synth import SETUPS

    names = list(SETUPS)
    found = hard_scenes(8000, 12)
    assert len(found) == 12 and found == sorted(set(found)) and found[0] >= 8000
    assert {names[i % len(names)] for i in found} == set(HARD_SETUPS)
    # none skipped: every scene in the range whose setup is a hard one is there
    assert found == [i for i in range(8000, found[-1] + 1)
                     if names[i % len(names)] in HARD_SETUPS]


def test_going_on_from_a_network_needs_the_torch_trainer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (["--from", str(PATCH_MODEL)], ["--lr", "0.0003"]):
        with pytest.raises(SystemExit) as stop:
            main(args + ["--out", str(tmp_path)])
        assert stop.value.code == 2
        assert "need --torch" in capsys.readouterr().err
    not_a_network = tmp_path / "notes.npz"
    not_a_network.write_bytes(b"not a network")
    with pytest.raises(SystemExit):
        main(["--torch", "--from", str(not_a_network), "--out", str(tmp_path)])
    assert "not a patch network" in capsys.readouterr().err
    with pytest.raises(ValueError, match="PyTorch"):
        train({"x": np.zeros((1, 40, 40, 3), np.uint8), "p": np.full((1, 4), 0.25),
               "y": np.zeros(1, np.int64)}, init=patch_network())
    assert not list(tmp_path.glob("patches.npz"))


def measured_scene() -> tuple[object, ...]:
    """An angled view of `board_scene` measured by a reader calibrated on it with the
    board empty (`tracker_for`): (reader, plan, measurement, colour model)."""
    from lab.evaluate import tracker_for
    from lab.synth import render
    from tests.test_vision_reading import board_scene

    spec = board_scene(elevation_deg=60.0, azimuth_deg=20.0)
    frame = render(spec)
    reader = tracker_for(spec, frame)
    assert reader is not None
    plan, m, model = reader.measure_frame(frame.image)
    return reader, plan, m, model


def test_a_patch_shows_its_cell_against_the_bare_board() -> None:
    from vision.cells import parse_cell
    from vision.patches import cell_patches

    reader, plan, m, model = measured_scene()
    names = ["a3", "a9", "h1", "f10"]  # bare board, light, bare, dark (see BOARD)
    cells = [parse_cell(n)[1] * 10 + parse_cell(n)[0] for n in names]
    patches = cell_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                           m.light_coef, model, np.array(cells))  # type: ignore[attr-defined]
    assert patches.shape == (4, 2 * HALF, 2 * HALF, 3)
    middle = patches[:, HALF - 6:HALF + 6, HALF - 6:HALF + 6].mean(axis=(1, 2, 3))
    bare, light, other_bare, dark = middle
    assert abs(bare) < 0.15 and abs(other_bare) < 0.15  # bare board reads about 1.0 - 1
    assert light > bare + 0.3 and dark < bare - 0.15
    none = cell_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                        m.light_coef, model, np.array([], np.int64))  # type: ignore[attr-defined]
    assert none.shape == (0, 2 * HALF, 2 * HALF, 3)


def test_the_second_look_sees_each_cell_beside_its_bare_board_in_the_calibration_photo(
) -> None:
    from vision.cells import parse_cell
    from vision.patches import BareView, cell_patches, with_reference

    reader, plan, m, model = measured_scene()
    view = m.bare_view  # type: ignore[attr-defined]
    assert view is not None and view.known.all()  # calibrated on the empty board
    names = ["a3", "a9", "h1", "f10"]  # bare board, light, bare, dark (see BOARD)
    cells = np.array([parse_cell(n)[1] * 10 + parse_cell(n)[0] for n in names])
    own = cell_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                       m.light_coef, model, cells)  # type: ignore[attr-defined]
    both = with_reference(reader.settings, plan.sampling, own,  # type: ignore[attr-defined]
                          view, model, cells)
    assert both.shape == (4, 2 * HALF, 2 * HALF, 6)
    assert np.array_equal(both[..., :3], own)
    middle = both[:, HALF - 6:HALF + 6, HALF - 6:HALF + 6]
    change = np.abs(middle[..., :3] - middle[..., 3:]).mean(axis=(1, 2, 3))
    assert change[0] < 0.05 and change[2] < 0.05  # bare then, bare now
    assert change[1] > 0.2 and change[3] > 0.1  # a tile since
    assert np.abs(middle[..., 3:]).mean(axis=(1, 2, 3)).max() < 0.15  # all bare then
    # no view, or a cell a tile covered in the photo: a board of one even colour
    assert not with_reference(reader.settings, plan.sampling, own,  # type: ignore[attr-defined]
                              None, model, cells)[..., 3:].any()
    covered = BareView(view.image, view.light, np.arange(100) != cells[1])
    part = with_reference(reader.settings, plan.sampling, own,  # type: ignore[attr-defined]
                          covered, model, cells)
    assert not part[1, ..., 3:].any() and np.array_equal(part[[0, 2, 3]], both[[0, 2, 3]])


def test_a_network_widened_to_more_channels_answers_as_before() -> None:
    from lab.train_patches import widened

    rng = np.random.default_rng(6)
    trainer = Trainer(rng, layers=LAYERS, hidden=HIDDEN)
    for name in ("conv0_bias", "conv1_bias", "b1", "b2"):
        trainer.params[name] = rng.normal(0, 0.1, trainer.params[name].shape).astype(np.float32)
    net = trainer.network()
    wide = widened(net, 6)
    assert (net.channels, wide.channels) == (3, 6)
    x = rng.normal(0, 0.3, (8, 2 * HALF, 2 * HALF, 6)).astype(np.float32)
    probs = rng.dirichlet(np.ones(4), 8)
    assert np.allclose(wide.proba(x, probs), net.proba(x[..., :3], probs), atol=1e-6)


def test_the_second_look_changes_only_the_cells_the_cell_network_is_unsure_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vision import read_cells
    SECOND_LOOK_P = default_thresholds().second_look_p

    reader, plan, m, model = measured_scene()
    probs = np.tile([0.9995, 0.0003, 0.0001, 0.0001], (100, 1))
    unsure = [5, 17, 42]
    probs[unsure] = [[0.6, 0.35, 0.03, 0.02], [0.3, 0.3, 0.3, 0.1], [0.2, 0.7, 0.05, 0.05]]
    assert (probs[unsure].max(axis=1) < SECOND_LOOK_P).all()
    got = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    sure = np.setdiff1d(np.arange(100), unsure)
    assert np.array_equal(got[sure], probs[sure])
    assert np.allclose(got[unsure, 3], probs[unsure, 3])
    assert not np.allclose(got[unsure], probs[unsure])
    # a cell sure of its state in view, unsure only whether it is hidden, is left alone:
    # the look could not change that chance
    probs[[30, 31]] = [[0.9, 0.00002, 0.00002, 0.09996], [0.00003, 0.85, 0.00003, 0.14994]]
    again = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    assert np.array_equal(again[[30, 31]], probs[[30, 31]])
    assert np.allclose(again[unsure], got[unsure])
    # without the model file the cell network's answer stands
    monkeypatch.setattr(read_cells, "patch_network", lambda: None)
    assert got is not probs
    assert np.array_equal(read_cells.second_look(reader.settings, plan, m, model, probs),  # type: ignore[arg-type, attr-defined]
                          probs)


def test_a_sure_tile_that_has_not_changed_its_cell_gets_a_second_look(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vision import read_cells
    UNCHANGED_TILE = default_thresholds().unchanged_tile

    reader, plan, m, model = measured_scene()
    probs = np.tile([0.9999, 0.00004, 0.00003, 0.00003], (100, 1))  # sure: bare board
    probs[60:] = [0.00003, 0.9999, 0.00004, 0.00003]  # sure: light tiles
    change = np.full(100, 2.0)
    change[60:] = 25.0  # a tile put down changes its cell ...
    change[[65, 80]] = UNCHANGED_TILE - 1  # ... but these look as the bare board did
    change[90] = np.nan  # the board was never seen there
    change[91] = UNCHANGED_TILE + 1
    looked: list[list[int]] = []
    patches = read_cells.cell_patches

    def recorded(*args: object) -> object:
        looked.append([int(i) for i in args[-1]])  # type: ignore[attr-defined]
        return patches(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(read_cells, "cell_patches", recorded)
    read_cells.second_look(reader.settings, plan, m, model, probs, change)  # type: ignore[arg-type, attr-defined]
    assert looked == [[65, 80]]
    looked.clear()
    read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    assert looked == []  # nothing known of the bare board: no look


def test_a_sure_bare_cell_unlike_the_bare_board_seen_there_gets_a_second_look_too() -> None:
    from vision import read_cells
    CHANGED_BARE = default_thresholds().changed_bare

    reader, plan, m, model = measured_scene()
    probs = np.tile([0.9999, 0.00004, 0.00003, 0.00003], (100, 1))  # sure: bare board
    probs[60:] = [0.00003, 0.9999, 0.00004, 0.00003]  # sure: light tiles
    probs[[10, 12]] = probs[60]  # a2 and c2: light tiles a bridge could join over b2
    change = np.full(100, 2.0)
    change[probs[:, 1] > 0.5] = CHANGED_BARE + 5  # a tile put down changes its cell
    change[[4, 71]] = CHANGED_BARE + 10  # bare or a tile, unlike the board seen there
    change[11] = CHANGED_BARE + 10  # b2: a deck over it would change it too
    change[9] = CHANGED_BARE - 1
    change[20] = np.nan  # the board was never seen there
    got = read_cells.second_look(reader.settings, plan, m, model, probs, change)  # type: ignore[arg-type, attr-defined]
    changed = np.flatnonzero(~np.all(np.isclose(got, probs, rtol=0, atol=1e-12), axis=1))
    assert list(changed) == [4]  # a tile unlike bare board is what it should be
    assert np.array_equal(read_cells.second_look(reader.settings, plan, m, model, probs),  # type: ignore[arg-type, attr-defined]
                          probs)


def test_a_sure_bare_cell_in_a_burnt_out_picture_gets_a_second_look_too() -> None:
    """Where a window's light burns the picture out, a white tile and the bare board look
    alike to the box means: a cell read as bare there is looked at again."""
    from dataclasses import replace

    from vision import read_cells
    from vision.features import cell_colours, integral

    reader, plan, m, model = measured_scene()
    probs = np.tile([0.9999, 0.00004, 0.00003, 0.00003], (100, 1))  # sure: bare board
    assert np.array_equal(read_cells.second_look(reader.settings, plan, m, model, probs),  # type: ignore[arg-type, attr-defined]
                          probs)
    boxes = plan.sampling.cell_boxes.reshape(100, 9, 4)[44]  # type: ignore[attr-defined]
    topdown = m.topdown.copy()  # type: ignore[attr-defined]
    topdown[boxes[:, 1].min():boxes[:, 3].max(), boxes[:, 0].min():boxes[:, 2].max()] = 250
    burnt = replace(m, topdown=topdown, integral=integral(topdown),  # type: ignore[type-var]
                    sub_bgr=cell_colours(integral(topdown), plan.sampling))  # type: ignore[attr-defined]
    got = read_cells.second_look(reader.settings, plan, burnt, model, probs)  # type: ignore[arg-type, attr-defined]
    changed = np.flatnonzero(~np.all(np.isclose(got, probs, rtol=0, atol=1e-12), axis=1))
    assert list(changed) == [44]
    # bright, but not burnt out: no more looks
    topdown[boxes[:, 1].min():boxes[:, 3].max(), boxes[:, 0].min():boxes[:, 2].max()] = 230
    bright = replace(m, topdown=topdown, integral=integral(topdown),  # type: ignore[type-var]
                     sub_bgr=cell_colours(integral(topdown), plan.sampling))  # type: ignore[attr-defined]
    assert np.array_equal(read_cells.second_look(reader.settings, plan, bright, model, probs),  # type: ignore[arg-type, attr-defined]
                          probs)


def test_a_patch_is_as_far_from_its_bare_board_as_what_changed_there() -> None:
    from vision.patches import bare_mismatch

    rng = np.random.default_rng(3)
    then = rng.uniform(-0.3, 0.3, (3, 2 * HALF, 2 * HALF, 3)).astype(np.float32)
    now = then + np.array([0.2, 0.1, -0.05], np.float32)  # brighter and warmer since
    now[1, 10:30, 10:30] += 0.5  # something put down there
    now[2] += rng.normal(0, 0.05, now[2].shape).astype(np.float32)  # noise
    gap = bare_mismatch(np.concatenate([now, then], axis=3))
    assert gap[0] < 1e-6  # the light's change is taken out
    assert abs(gap[1] - 0.1875) < 1e-5  # 0.375 over a quarter, -0.125 over the rest
    assert 0.03 < gap[2] < 0.05  # 0.05 * sqrt(2 / pi) on average


def test_a_looked_at_cell_just_like_its_bare_board_in_the_calibration_photo_is_bare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lamp's glare can make both networks take a bare cell for a light tile: where the
    cell's patch is what the calibration photo showed there, it is bare whatever they say,
    and it keeps its chance of being hidden."""
    from dataclasses import replace

    from vision import read_cells
    from vision.cells import parse_cell
    from vision.patches import BareView

    class Fooled:
        """Both networks fooled: every cell looked at is a light tile."""

        channels = 6

        def steady_proba(self, settings: Thresholds, patches: np.ndarray, probs: np.ndarray
                         ) -> np.ndarray:
            seen = np.tile([0.1, 0.85, 0.05], (len(patches), 1))
            return np.column_stack([seen * (1 - probs[:, 3:]), probs[:, 3]])

    reader, plan, m, model = measured_scene()
    names = ["a3", "a9", "h1", "f10"]  # bare board, light, bare, dark (see BOARD)
    cells = [parse_cell(n)[1] * 10 + parse_cell(n)[0] for n in names]
    probs = np.tile([0.9999, 0.00004, 0.00003, 0.00003], (100, 1))
    probs[cells] = [0.3, 0.6, 0.05, 0.05]
    monkeypatch.setattr(read_cells, "patch_network", lambda: Fooled())
    got = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    fooled = [0.095, 0.8075, 0.0475, 0.05]
    assert np.allclose(got[cells], [[0.95, 0, 0, 0.05], fooled, [0.95, 0, 0, 0.05], fooled])
    # no calibration photo, or a tile covered the cell in it: the look's answer stands
    for view in (None, BareView(m.bare_view.image, m.bare_view.light,  # type: ignore[attr-defined]
                                np.arange(100) != cells[0])):
        got = read_cells.second_look(reader.settings, plan, replace(m, bare_view=view),  # type: ignore[arg-type, type-var]
                                    model, probs)
        assert np.allclose(got[cells[0]], fooled)
        assert np.allclose(got[cells[2]], [0.95, 0, 0, 0.05] if view else fooled)


def run_training(command: Callable[[list[str]], int], model: Path, tmp_path: Path,
                 capsys: pytest.CaptureFixture[str], more: Sequence[str] = ()
                 ) -> tuple[PatchNetwork, str]:
    """Run a patch-training command on 4 scenes, 1 epoch (and `more` options); its
    network and its stderr."""
    cache = tmp_path / "examples.npz"
    args = ["--scenes", "4", "--epochs", "1", "--jobs", "1", "--hold-out", "2",
            "--cache", str(cache), "--out", str(tmp_path), *more]
    assert command(args) == 0
    assert cache.exists()
    net = PatchNetwork.load(tmp_path / model.name)
    assert len(net.convs) == len(LAYERS)
    err = capsys.readouterr().err
    assert "written to" in err
    return net, err


def test_training_from_generated_scenes_writes_a_network_the_pipeline_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err = run_training(main, PATCH_MODEL, tmp_path, capsys,
                          ["--hard-scenes", "2", "--hard-start", "10"])
    assert "held-out scenes" in err
    with np.load(tmp_path / "examples.npz") as data:
        assert set(data.files) == {"x", "p", "y", "cell", "tiles", "scene"}
        # the four scenes asked for, then two of the hard setups from scene 10 on
        assert set(np.unique(data["scene"])) <= {0, 1, 2, 3, *hard_scenes(10, 2)}
        assert set(np.unique(data["scene"])) & set(hard_scenes(10, 2))
        assert data["x"].dtype == np.uint8 and len(data["x"]) == len(data["y"]) > 0
        assert data["x"].shape[1:] == (2 * HALF, 2 * HALF, 6)  # the frame's, the photo's
        assert set(np.unique(data["y"])) <= {0, 1, 2}


def test_a_frame_gets_at_most_so_many_second_looks_the_least_sure_first() -> None:
    from vision import read_cells
    SECOND_LOOKS = default_thresholds().second_looks

    reader, plan, m, model = measured_scene()
    rng = np.random.default_rng(5)
    top = rng.uniform(0.4, 0.95, 100)  # an arm over the board: every cell unsure ...
    rest = (1 - top) / 3
    probs = np.column_stack([top, rest, rest, rest])
    hidden = [0, 1, 10, 11]  # ... and some hidden under it
    probs[hidden] = [0.1, 0.1, 0.1, 0.7]
    got = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    changed = np.flatnonzero(~np.all(np.isclose(got, probs), axis=1))
    assert len(changed) == SECOND_LOOKS
    seen = np.setdiff1d(np.arange(100), hidden)
    assert set(changed) == set(seen[np.argsort(top[seen])[:SECOND_LOOKS]])


def test_with_nothing_hidden_every_unsure_cell_gets_a_second_look() -> None:
    """A lamp can make most of a clean board unsure: no cell is left unread for a limit
    meant for an arm over the board."""
    from vision import read_cells
    SECOND_LOOKS = default_thresholds().second_looks

    reader, plan, m, model = measured_scene()
    top = np.random.default_rng(6).uniform(0.6, 0.98, 100)
    rest = (1 - top) / 3
    probs = np.column_stack([top, rest, rest, rest])
    got = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    changed = np.flatnonzero(~np.all(np.isclose(got, probs), axis=1))
    assert len(changed) == 100 > SECOND_LOOKS


def test_training_from_a_still_set_takes_its_images_and_their_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], synth_still_set: Path
) -> None:
    from lab.sets import load_set

    run_training(main, PATCH_MODEL, tmp_path, capsys, ["--scenes-from", str(synth_still_set)])
    records = load_set(synth_still_set)
    with np.load(tmp_path / "examples.npz") as data:
        assert set(np.unique(data["scene"])) <= {0, 1, 2, 3} and len(data["y"]) > 0
        for scene, cell, label in zip(data["scene"], data["cell"], data["y"], strict=True):
            row = records[int(scene)]["board"][9 - int(cell) // 10]
            assert ".LD"[int(label)] == row[int(cell) % 10]


def test_patch_training_also_learns_from_another_run_s_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--mix` adds another run's kept examples (another scene source's, say) to this run's,
    their scenes numbered on after its own, so that `--hold-out` keeps whole scenes of both
    out; a file that holds no examples is refused."""
    first = tmp_path / "first"
    run_training(main, PATCH_MODEL, first, capsys)
    with np.load(first / "examples.npz") as data:
        kept = len(data["y"])
    second = tmp_path / "second"
    _, err = run_training(main, PATCH_MODEL, second, capsys,
                          ["--seed", "77", "--mix", str(first / "examples.npz")])
    with np.load(second / "examples.npz") as own:
        count = len(own["y"]) + kept
    assert f"patches: {count} examples" in err
    refuses_a_bad_mix(main, second / "examples.npz", tmp_path)


def refuses_a_bad_mix(command: Callable[[list[str]], int], cache: Path, tmp_path: Path) -> None:
    """A training command given `--mix` a file that holds no examples stops with a usage
    error naming the option (its own examples kept in `cache`)."""
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a cache")
    with pytest.raises(SystemExit, match="--mix"):
        command(["--scenes", "4", "--epochs", "1", "--jobs", "1", "--cache", str(cache),
                 "--mix", str(bad), "--out", str(tmp_path)])


def test_jittered_patches_are_seen_in_other_light_and_colours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A patch is its colours over the bare board's: a board of another colour, or a lamp of
    another hue, scales the frame's channels and the calibration photo's alike, and the
    light since calibration the frame's alone, by less. The trainer shows each patch so
    (`--jitter`, with the PyTorch trainer only)."""
    from lab.train_torch import jittered

    rng = np.random.default_rng(8)
    bare = np.zeros((4000, 6, 8, 8), np.float32)  # the bare board, frame and photo: ratio 1
    seen = jittered(bare, 0.3, rng)
    assert seen.shape == bare.shape and seen.dtype == np.float32
    gains = np.log(seen.mean(axis=(2, 3)) + 1.0)  # (n, 6): each channel's gain
    frame, photo = gains[:, :3], gains[:, 3:]
    assert 0.25 < float(photo.std()) < 0.35  # about the spread asked for
    assert float((frame - photo).std()) < 0.15  # the frame's own change is a third of it
    assert abs(float(np.corrcoef(frame[:, 0], photo[:, 0])[0, 1])) > 0.9
    assert float(seen.max()) <= 255 / 128 - 1 and float(seen.min()) >= -1.0
    still = jittered(bare, 0.0, rng)
    assert abs(float(still.mean())) < 0.01 and 0.015 < float(still.std()) < 0.025  # noise
    with pytest.raises(SystemExit) as stop:
        main(["--jitter", "0.1", "--out", str(tmp_path)])
    assert stop.value.code == 2 and "--jitter needs --torch" in capsys.readouterr().err


def test_a_patch_network_may_read_the_learned_tile_colours_beside_the_patch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A patch's colours are over the bare board's, so how light a tile looks in one depends
    on the board's colour. A network of twelve channels also reads the learned light and
    dark tile colours, planes of one colour beside the frame's patch and the calibration
    photo's. Widened from the shipped network (the new channels weighing nothing), it reads
    every cell as the shipped one does."""
    from lab.train_patches import widened, with_tile_planes
    from vision import read_cells
    from vision.patches import tile_colours, with_tile_colours

    reader, plan, m, model = measured_scene()
    colours = tile_colours(model)  # type: ignore[arg-type]
    assert colours.shape == (6,) and np.all(colours[:3] > colours[3:])  # light over dark
    assert np.all(tile_colours(replace(model, light=None))[:3] == 0.0)  # type: ignore[type-var]
    patches = np.random.default_rng(9).normal(0, 0.3, (5, 2 * HALF, 2 * HALF, 6))
    wide = with_tile_colours(patches.astype(np.float32), colours)
    assert wide.shape == (5, 2 * HALF, 2 * HALF, 12)
    assert np.allclose(wide[..., :6], patches) and np.allclose(wide[2, 7, 11, 6:], colours)
    data = {"x": np.full((2, 4, 4, 6), 128, np.uint8), "tiles": np.stack([colours, -colours])}
    planes = with_tile_planes(data)["x"]
    assert planes.shape == (2, 4, 4, 12)
    assert np.allclose(planes[0, 1, 2, 6:] / 128.0 - 1.0, colours, atol=1 / 128)
    probs = np.tile([0.9995, 0.0003, 0.0001, 0.0001], (100, 1))
    probs[[5, 17, 42]] = [[0.6, 0.35, 0.03, 0.02], [0.3, 0.3, 0.3, 0.1], [0.2, 0.7, 0.05, 0.05]]
    shipped = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    twelve = widened(patch_network(), 12)
    assert twelve.channels == 12
    monkeypatch.setattr(read_cells, "patch_network", lambda: twelve)
    again = read_cells.second_look(reader.settings, plan, m, model, probs)  # type: ignore[arg-type, attr-defined]
    assert np.allclose(again, shipped, atol=1e-6) and not np.allclose(again, probs)
