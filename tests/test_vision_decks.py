"""The deck network: its patches along a bridge, its training and its place in the
pipeline (a second look at the bridge candidates the bridge network is unsure of)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from contracts.calibration import default_thresholds
from lab.train_decks import augment, main, train
from lab.train_patches import LAYERS
from tests.test_vision_patches import measured_scene, refuses_a_bad_mix, run_training
from vision.cells import parse_cell
from vision.decks import (
    DECK_MODEL,
    HIGH,
    LONG,
    LOW,
    WIDE,
    deck_extras,
    deck_network,
    deck_patches,
    unsure_candidates,
)
from vision.patches import PatchNetwork

SETTINGS = default_thresholds()
DECK_LOOKS, FAINT = SETTINGS.deck_looks, SETTINGS.deck_faint
FAINT_LOOKS, SURE_LOOKS = SETTINGS.deck_faint_looks, SETTINGS.deck_sure_looks


def _pairs(*names: tuple[str, str]) -> np.ndarray:
    return np.array([[parse_cell(a), parse_cell(b)] for a, b in names], np.int64)


def test_a_deck_patch_lies_along_the_bridge_and_shows_its_deck() -> None:
    reader, plan, m, model = measured_scene()
    # bridges a1-c1 (straight), c5-d7 (knight), e2-g4 (diagonal); a3-c3 is bare board
    pairs = _pairs(("a1", "c1"), ("c5", "d7"), ("e2", "g4"), ("a3", "c3"), ("c1", "a1"))
    patches = deck_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                           m.light_coef, model, pairs)  # type: ignore[attr-defined]
    assert patches.shape == (5, WIDE, LONG, 3)
    grey = patches.mean(axis=3)
    middle = grey[:, WIDE // 2 - 3:WIDE // 2 + 2, LONG // 2 - 4:LONG // 2 + 4].mean(axis=(1, 2))
    assert abs(middle[3]) < 0.1  # bare board reads about 1.0 - 1
    assert (middle[[0, 1, 2, 4]] > 0.15).all()  # the lighter grey deck
    # the deck runs the patch's length: its middle band is alike from end to end
    band = grey[:3, WIDE // 2 - 2:WIDE // 2 + 1, LONG // 3:2 * LONG // 3].mean(axis=1)
    assert (band > 0.1).all()
    # the same bridge from its other end: the same patch turned half a turn, near enough
    assert np.abs(patches[4, ::-1, ::-1] - patches[0]).mean() < 0.05
    none = deck_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                        m.light_coef, model, np.zeros((0, 2, 2), np.int64))  # type: ignore[attr-defined]
    assert none.shape == (0, WIDE, LONG, 3)


def test_the_plan_keeps_every_candidate_s_deck_frame() -> None:
    reader, plan, m, model = measured_scene()
    pairs = np.array(plan.bridges.pairs, np.int64)  # type: ignore[attr-defined]
    frames = plan.decks  # type: ignore[attr-defined]
    assert frames.shape == (len(pairs), 3, 2)
    some = np.array([0, 17, len(pairs) - 1])
    kept = deck_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                        m.light_coef, model, pairs[some], frames[some])  # type: ignore[attr-defined]
    fresh = deck_patches(reader.settings, plan.sampling, m.topdown,  # type: ignore[attr-defined]
                         m.light_coef, model, pairs[some])  # type: ignore[attr-defined]
    assert np.array_equal(kept, fresh)


def test_the_deck_network_reads_the_bridge_network_s_odds_and_the_kind() -> None:
    extras = deck_extras(np.array([0.0, 0.5, 0.9]), np.eye(3))
    assert extras.shape == (3, 5)
    assert np.isfinite(extras).all()  # a sure 0 is clipped, not -inf
    assert np.allclose(np.exp(extras[:, :2]).sum(axis=1), 1.0, atol=1e-3)
    assert np.array_equal(extras[:, 2:], np.eye(3))


def test_only_unsure_candidates_get_a_second_look_the_least_sure_first() -> None:
    p = np.array([0.0, FAINT, LOW, 0.02, 0.5, 0.97, HIGH, 1.0])
    assert list(unsure_candidates(SETTINGS, p)) == [3, 4, 5, 2]  # then the faint one at LOW
    rng = np.random.default_rng(1)
    many = rng.uniform(0.05, 0.95, 100)
    picked = unsure_candidates(SETTINGS, many)
    assert len(picked) == DECK_LOOKS
    assert set(picked) == set(np.argsort(np.abs(many - 0.5))[:DECK_LOOKS])


def test_faint_candidates_get_a_few_looks_the_likeliest_first() -> None:
    rng = np.random.default_rng(2)
    faint = rng.uniform(FAINT, LOW, 3 * FAINT_LOOKS)
    p = np.concatenate([[0.3, 0.9], faint, [FAINT / 2]])
    picked = unsure_candidates(SETTINGS, p)
    assert list(picked[:2]) == [0, 1]  # the unsure first
    assert list(picked[2:]) == list(2 + np.argsort(-faint)[:FAINT_LOOKS])


def test_below_faint_only_candidates_between_sure_tiles_get_a_look_the_likeliest_first(
) -> None:
    rng = np.random.default_rng(3)
    low = rng.uniform(1e-9, FAINT, 3 * SURE_LOOKS)
    p = np.concatenate([[0.3], low, low[:5] / 2])
    sure = np.ones(len(p), bool)
    sure[-5:] = False  # fainter still, but not between two sure tiles of one colour
    assert list(unsure_candidates(SETTINGS, p)) == [0]
    picked = unsure_candidates(SETTINGS, p, sure)
    assert picked[0] == 0
    assert list(picked[1:]) == list(1 + np.argsort(-low)[:SURE_LOOKS])
    few = unsure_candidates(SETTINGS, p[:4], sure[:4])
    assert sorted(few[1:]) == [1, 2, 3]


def _stripes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Noisy board (class 0), and patches with a faint deck along their middle (1)."""
    y = rng.integers(0, 2, n)
    x = rng.normal(0, 0.06, (n, WIDE, LONG, 3)).astype(np.float32)
    for i in range(n):
        if y[i]:
            top = WIDE // 2 - 3 + int(rng.integers(-2, 3))
            x[i, top:top + 5, 8:LONG - 8] += 0.15
            x[i, top + 5, 8:LONG - 8] -= 0.3  # its shadow
    return x, y


@pytest.mark.slow
def test_training_learns_a_deck_the_bridge_network_cannot_see(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    x, y = _stripes(rng, 1000)
    data = {"x": np.clip(np.round((x + 1) * 128), 0, 255).astype(np.uint8),
            "p": np.full(len(y), 0.5, np.float32),  # the bridge network says nothing
            "kind": np.tile(np.eye(3, dtype=np.float32), (334, 1))[:len(y)], "y": y}
    net = train(data, epochs=8)
    test_x, test_y = _stripes(rng, 300)
    got = net.scores(test_x, deck_extras(np.full(300, 0.5), np.tile(np.eye(3), (100, 1))))
    assert got.shape == (300, 2)
    assert ((got[:, 1] >= 0.5) == (test_y == 1)).mean() > 0.9
    net.save(tmp_path / "d.npz")
    again = PatchNetwork.load(tmp_path / "d.npz")
    assert np.allclose(again.scores(test_x, deck_extras(np.full(300, 0.5),
                                                        np.tile(np.eye(3), (100, 1)))), got)


def test_augmenting_mirrors_a_deck_but_keeps_it_a_deck() -> None:
    rng = np.random.default_rng(4)
    x = np.zeros((1, WIDE, LONG, 3), np.uint8)
    x[0, 10:14, 6:40] = 200
    seen = set()
    for _ in range(20):
        got = augment(x, rng)
        assert got.shape == x.shape
        assert (got > 0).sum() == (x > 0).sum()  # shifted and mirrored, never cut
        rows = np.flatnonzero(got[0].max(axis=(1, 2)))
        seen.add((int(rows[0]), int(rows[-1])))
    assert len(seen) > 2


def test_the_shipped_deck_network_loads_with_the_layers_training_makes() -> None:
    assert DECK_MODEL.exists()
    net = deck_network()
    assert net is not None
    assert [(c.weight.shape[0], c.weight.shape[2]) for c in net.convs] == list(LAYERS)
    got = net.scores(np.zeros((2, WIDE, LONG, 3), np.float32),
                     deck_extras(np.array([0.3, 0.7]), np.eye(3)[:2]))
    assert got.shape == (2, 2) and np.allclose(got.sum(axis=1), 1.0)


def test_the_second_look_changes_only_the_candidates_the_bridge_network_is_unsure_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vision import read_bridges

    reader, plan, m, model = measured_scene()
    keep = np.arange(0, 400, 4)
    p = np.full(len(keep), 0.0001)
    unsure = [3, 10, 50]
    p[unsure] = [0.3, 0.6, 0.95]
    p[[7, 8]] = [0.9999, HIGH]  # sure bridges
    none = np.zeros(len(p), bool)
    got = read_bridges.deck_look(reader.settings, plan, m, model, p, keep, none)  # type: ignore[arg-type, attr-defined]
    sure = np.setdiff1d(np.arange(len(p)), unsure)
    assert np.array_equal(got[sure], p[sure])
    assert not np.allclose(got[unsure], p[unsure])
    # without the model file the bridge network's answer stands
    monkeypatch.setattr(read_bridges, "deck_network", lambda: None)
    assert np.array_equal(read_bridges.deck_look(reader.settings, plan, m, model, p, keep, none),  # type: ignore[arg-type, attr-defined]
                          p)


def test_no_look_is_taken_at_a_candidate_that_cannot_stand_beside_a_sure_bridge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vision import read_bridges

    reader, plan, m, model = measured_scene()
    pairs = [tuple(sorted(pair)) for pair in plan.bridges.pairs]  # type: ignore[attr-defined]

    def index(a: str, b: str) -> int:
        return pairs.index(tuple(sorted((parse_cell(a), parse_cell(b)))))

    # a sure bridge c5-d7; c5-e5 shares its tile c5, d5-c7 crosses it; e2-g4 stands apart
    keep = np.array([index("c5", "d7"), index("c5", "e5"), index("d5", "c7"),
                     index("e2", "g4")])
    p = np.array([HIGH, 0.4, 0.4, 0.4])
    looked: list[int] = []
    shown = read_bridges.deck_patches

    def counted(*args: object) -> np.ndarray:
        looked.append(len(args[5]))  # type: ignore[arg-type]
        return shown(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(read_bridges, "deck_patches", counted)
    got = read_bridges.deck_look(reader.settings, plan, m, model, p, keep,  # type: ignore[arg-type, attr-defined]
                              np.ones(4, bool))
    assert looked == [1]  # e2-g4 alone
    assert np.array_equal(got[:3], p[:3]) and got[3] != p[3]
    # a bridge the bridge network is unsure of settles nothing: all four are looked at
    looked.clear()
    p[0] = 0.4
    read_bridges.deck_look(reader.settings, plan, m, model, p, keep,  # type: ignore[arg-type, attr-defined]
                        np.ones(4, bool))
    assert looked == [4]


def test_deck_training_from_generated_scenes_writes_a_network_the_pipeline_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_training(main, DECK_MODEL, tmp_path, capsys)
    with np.load(tmp_path / "examples.npz") as data:
        assert set(data.files) == {"x", "p", "kind", "y", "pair", "scene"}
        assert data["x"].dtype == np.uint8 and len(data["x"]) == len(data["y"]) > 0
        assert data["x"].shape[1:] == (WIDE, LONG, 3)
        assert data["y"].sum() > 0  # the scenes' bridges are among the examples


def test_deck_training_from_a_still_set_takes_its_images_and_their_bridges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], synth_still_set: Path
) -> None:
    from lab.sets import load_set

    run_training(main, DECK_MODEL, tmp_path, capsys, ["--scenes-from", str(synth_still_set)])
    records = load_set(synth_still_set)
    with np.load(tmp_path / "examples.npz") as data:
        scenes = data["scene"]
        assert set(np.unique(scenes)) <= {0, 1, 2, 3} and data["y"].sum() > 0
        for scene in np.unique(scenes):  # at most the bridges the truth has
            assert data["y"][scenes == scene].sum() <= len(records[int(scene)]["bridges"])


def test_deck_training_also_learns_from_another_run_s_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    run_training(main, DECK_MODEL, first, capsys)
    with np.load(first / "examples.npz") as data:
        kept = {k: data[k] for k in data.files}
    second = tmp_path / "second"
    _, err = run_training(main, DECK_MODEL, second, capsys,
                          ["--seed", "77", "--mix", str(first / "examples.npz")])
    with np.load(second / "examples.npz") as own:
        count = len(own["y"]) + len(kept["y"])
    # Both runs' examples are learnt from: the count is the sum.
    assert f"decks: {count} examples" in err
    refuses_a_bad_mix(main, second / "examples.npz", tmp_path)
    with pytest.raises(SystemExit):
        main(["--from", str(first / DECK_MODEL.name), "--out", str(tmp_path)])
    assert "need --torch" in capsys.readouterr().err
