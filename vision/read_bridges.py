"""Stage 5, Bridges: which of the possible bridges lie on the board.

Every pair of cells at a bridge's distance is a candidate (`bridge_candidates`); the bridge
network scores them from their decks' and ends' measurements, and the deck network looks
again, through the deck's image, at those it is unsure of (`deck_look`).
`learned_bridges` returns the bridges kept and their ends' colour.
"""

from __future__ import annotations

import numpy as np

from contracts.calibration import ColourModel, Thresholds
from vision.bridges import (
    BridgePlan,
    measure_deck_edges,
    measure_flanks,
    measure_rows,
    plan_conflicts,
    plan_tables,
)
from vision.cells import SIZE, Cell
from vision.classify import DARK, LIGHT
from vision.decks import HIGH as DECK_HIGH
from vision.decks import deck_extras, deck_network, deck_patches, unsure_candidates
from vision.learned import Network, candidate_features, foot_candidates, tile_chance
from vision.measure import Measurement, Plan


def bridge_candidates(
    settings: Thresholds, bridge_plan: BridgePlan, m: Measurement, model: ColourModel,
    probs: np.ndarray, ends: np.ndarray | None = None, extra: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The bridge network's inputs for this frame's candidates and their indices in the
    plan's pair list (see `candidate_features`, for `ends` `looked_cells` and for `extra`
    `foot_candidates`): what the pipeline reads and training learns from, measured
    alike."""
    return candidate_features(
        settings, bridge_plan,
        lambda rows: measure_rows(bridge_plan, m.integral, m.light_coef, rows),
        model, probs, m.background,
        lambda rows: measure_flanks(bridge_plan, m.integral, m.light_coef, rows),
        None if m.slopes is None else (
            lambda rows: measure_deck_edges(bridge_plan, m.slopes, rows)), ends, extra)


def bridge_probabilities(
    settings: Thresholds, bridge_plan: BridgePlan, m: Measurement, model: ColourModel,
    probs: np.ndarray, net: Network, ends: np.ndarray | None = None,
    extra: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The bridge network's probability for each candidate worth asking about (see
    `bridge_candidates`), and the candidates' indices in the plan's pair list; None when
    the network was made for other features."""
    feats, keep = bridge_candidates(settings, bridge_plan, m, model, probs, ends, extra)
    if len(keep) == 0:
        return np.zeros(0), keep
    if feats.shape[1] != net.mean.shape[0]:
        return None
    return net.proba(feats), keep


def learned_bridges(
    settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel, probs: np.ndarray,
    net: Network, ends: np.ndarray | None = None, change: np.ndarray | None = None,
) -> tuple[list[tuple[Cell, Cell]], list[int]] | None:
    """Bridges by the bridge network (with a second look at those it is unsure of), best
    first, kept only where they fit together (see `BridgeLayout`); None when the network
    was made for other features. With `change` (see `background_change`), pairs whose
    one end a bridge's foot may hide are asked about too, and need `Thresholds.foot_p`."""
    bridge_plan = plan.bridges
    foot = None if change is None else foot_candidates(
        settings, bridge_plan, probs, change, ends)
    scored = bridge_probabilities(settings, bridge_plan, m, model, probs, net, ends, foot)
    if scored is None:
        return None
    p, keep = scored
    if len(keep) == 0:
        return [], []
    pair_cells = plan_tables(bridge_plan)[0][keep]  # (k, 2)
    pair_ends = probs[pair_cells]  # (k, 2, 4)
    sure = np.maximum(pair_ends[:, :, LIGHT].min(axis=1), pair_ends[:, :, DARK].min(axis=1))
    sure_ends = sure >= settings.bridge_sure_ends
    needed = np.where(sure_ends, settings.bridge_min_p_sure_ends, settings.bridge_min_p)
    if foot is not None:
        needed[foot[keep]] = settings.foot_p
    # A deck the bridge network did not see, found by the deck network's look, needs a
    # tile in sight at one end at least (a tile, or a foot hiding one): the look is not
    # taken where it could not count.
    tile = tile_chance(probs, ends)
    unfounded = (p < needed) & (tile[pair_cells].max(axis=1) < settings.deck_end)
    p = deck_look(settings, plan, m, model, p, keep, sure_ends, unfounded)
    # Best first, each where it fits among those taken (`BridgeLayout`'s rules, by the
    # plan's table of pairs that cannot both stand).
    conflicts = plan_conflicts(bridge_plan)
    order = np.argsort(-p, kind="stable")
    taken: list[int] = []
    found: list[tuple[Cell, Cell]] = []
    colours: list[int] = []
    for n in order[p[order] >= needed[order]].tolist():
        k = int(keep[n])
        if taken and conflicts[k, taken].any():
            continue
        a, b = bridge_plan.pairs[k]
        ia, ib = a[1] * SIZE + a[0], b[1] * SIZE + b[0]
        light = probs[ia, LIGHT] + probs[ib, LIGHT]
        dark = probs[ia, DARK] + probs[ib, DARK]
        taken.append(k)
        found.append((a, b))
        colours.append(LIGHT if light >= dark else DARK)
    return found, colours


def deck_look(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
               p: np.ndarray, keep: np.ndarray, sure: np.ndarray,
               unfounded: np.ndarray | None = None) -> np.ndarray:
    """The candidates' bridge probabilities `p` with those the bridge network is unsure of
    (and a few faint ones, see `vision.decks.unsure_candidates`) replaced by the deck
    network's (`vision.decks`), when it is there. `sure`: the candidates whose ends the
    cell network is sure are tiles of one colour; `unfounded`: those whose look would not
    count (see `deck_end`), which keep `p` and are not looked at. They are chosen among
    the candidates looked at all the same: they still take their places."""
    net = deck_network()
    unsure = unsure_candidates(settings, p, sure)
    if unfounded is not None:
        unsure = unsure[~unfounded[unsure]]
    if net is None or not len(unsure):
        return p
    # A candidate that shares a tile with, or crosses, a bridge the bridge network is sure
    # of (`vision.decks.HIGH` or more: never looked at) cannot be reported beside it: its
    # look is skipped. (It could only displace that bridge by a look surer still.)
    conflicts = plan_conflicts(plan.bridges)
    settled: list[int] = []
    for n in np.argsort(-p, kind="stable"):
        if p[n] < DECK_HIGH:
            break
        if not conflicts[keep[n], settled].any():
            settled.append(int(keep[n]))
    if settled:
        unsure = unsure[~conflicts[np.ix_(keep[unsure], settled)].any(axis=1)]
        if not len(unsure):
            return p
    pairs = np.array([plan.bridges.pairs[int(j)] for j in keep[unsure]], np.int64)
    kinds = plan_tables(plan.bridges)[2][keep[unsure]]
    patches = deck_patches(settings, plan.sampling, m.topdown, m.light_coef, model, pairs,
                           None if plan.decks is None else plan.decks[keep[unsure]])
    out = p.copy()
    out[unsure] = net.scores(patches, deck_extras(p[unsure], kinds))[:, 1]
    return out
