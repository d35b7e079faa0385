"""The ladder's bookkeeping at scale: the sparse refit is the reference fit, the game-by-game
step tracks it, and pairing by rating windows keeps every promise of the pairing rule
(capacity, limit, no self-pairs, near ratings first) at any size."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maag.server.compete.pairing import WINDOW, choose_pairs
from maag.stats import ratings
from maag.stats.live import LiveRatings, expected, fit_points


def _games(n_bots: int, n_games: int, seed: int, spread: float = 200.0) -> tuple[dict[str, float], list]:
    rng = random.Random(seed)
    true = {f"b{i:03d}": rng.gauss(0, spread) for i in range(n_bots)}
    names = sorted(true)
    games = []
    for _ in range(n_games):
        a, b = rng.sample(names, 2)
        u, p = rng.random(), expected(true[a], true[b])
        games.append((a, b, 1.0 if u < 0.9 * p else 0.5 if u < 0.9 * p + 0.1 else 0.0))
    return true, games


def test_the_sparse_fit_is_the_reference_fit() -> None:
    _, games = _games(30, 4000, 1)
    ref = ratings.fit(games)
    assert not ref.regularized
    got = fit_points(games, prior_games=0.0)
    assert set(got) == set(ref.elo)
    assert max(abs(got[b] - ref.elo[b]) for b in got) < 0.05


def test_the_sparse_fit_exists_where_the_plain_one_does_not() -> None:
    """An unbeaten bot: the reference adds one virtual draw per bot against the mean, and so
    does fit_points (prior_games=1, its default)."""
    _, games = _games(12, 300, 2)
    games += [("champ", b, 1.0) for b in ("b000", "b001", "b002") for _ in range(3)]
    ref = ratings.fit(games)
    assert ref.regularized
    got = fit_points(games)
    assert max(abs(got[b] - ref.elo[b]) for b in got) < 0.5
    assert max(got, key=got.__getitem__) == "champ"


def test_game_by_game_steps_track_the_truth_and_a_refit_is_replayed_onto() -> None:
    true, games = _games(20, 6000, 3)
    live = LiveRatings()
    for g in games:
        live.update(*g)
    mean = sum(true.values()) / len(true)
    err = sum(abs(live.elo[b] - (true[b] - mean)) for b in true) / len(true)
    assert err < 60
    # A refit of the first 5000 while the last 1000 were played: the 1000 are stepped again
    # onto it, with the steps of bots that have all their games (replace counts none twice).
    fitted = fit_points(games[:5000])
    live.replace(fitted, games[5000:])
    assert live.elo != fitted and sum(live.games.values()) == 2 * len(games)
    again = LiveRatings()
    again.games = live.games.copy()
    again.replace(fitted)
    for g in games[5000:]:
        a, b, s = g
        ea, eb = again.elo[a], again.elo[b]
        again.elo[a] = ea + again.step(a) * (s - expected(ea, eb))
        again.elo[b] = eb - again.step(b) * (s - expected(ea, eb))
    assert live.elo == pytest.approx(again.elo)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 60), caps=st.lists(st.integers(0, 3), min_size=60, max_size=60),
       limit=st.one_of(st.none(), st.integers(1, 40)), seed=st.integers(0, 2**32))
def test_pairing_keeps_capacity_and_limit_at_any_size(n: int, caps: list[int], limit: int | None,
                                                      seed: int) -> None:
    rng = random.Random(seed)
    cap = {f"b{i}": caps[i] for i in range(n)}
    elo = {b: rng.gauss(0, 300) for b in cap if rng.random() < 0.9}
    idle = {b: rng.random() for b in cap if rng.random() < 0.8}
    pairs = choose_pairs(dict(cap), elo, idle, {}, random.Random(seed), 100.0, limit)
    used: dict[str, int] = {}
    for a, b in pairs:
        assert a != b and a in cap and b in cap
        used[a] = used.get(a, 0) + 1
        used[b] = used.get(b, 0) + 1
    assert all(used[b] <= cap[b] for b in used)
    if limit is not None:
        assert len(pairs) <= limit
    # No pair is left unmade while two bots still have capacity (and the limit allows).
    room = [b for b in cap if cap[b] - used.get(b, 0) > 0]
    assert len(room) < 2 or (limit is not None and len(pairs) == limit)


def test_a_large_ladder_pairs_near_ratings_and_the_longest_idle_first() -> None:
    rng = random.Random(4)
    names = [f"b{i:04d}" for i in range(2000)]
    elo = {b: rng.gauss(0, 300) for b in names}
    idle = {b: rng.random() for b in names}
    pairs = choose_pairs(dict.fromkeys(names, 1), elo, idle, {}, random.Random(1), 100.0, limit=300)
    rank = {b: k for k, b in enumerate(sorted(names, key=elo.__getitem__))}
    # Neighbours in rating (within the window, counting bots already paired away)...
    assert sum(abs(rank[a] - rank[b]) <= 4 * WINDOW for a, b in pairs) > 0.95 * len(pairs)
    # ...and the 300 pickers are the 300 longest idle of those still free when they picked.
    first = sorted(names, key=idle.__getitem__)[0]
    assert first in pairs[0]


def test_a_rematch_waits_for_another_opponent_a_moment() -> None:
    """The two bots of a game that just ended are the only free ones: with `rematch_wait` they
    are not paired again at once; once waited, or when a third bot frees up, they are."""
    last = {"a": "b", "b": "a"}
    idle = {"a": 10.0, "b": 10.0, "c": 10.2}
    elo = {"a": 0.0, "b": 0.0, "c": 0.0}

    def pairs(cap: dict[str, int], now: float) -> list[tuple[str, str]]:
        return choose_pairs(dict(cap), elo, idle, last, random.Random(1), 100.0, rematch_wait=0.3, now=now)

    assert pairs({"a": 1, "b": 1}, now=10.1) == []
    assert sorted(pairs({"a": 1, "b": 1}, now=10.4)[0]) == ["a", "b"]
    assert len(pairs({"a": 1, "b": 1, "c": 1}, now=10.25)) == 1  # (another candidate: no wait)
    assert choose_pairs({"a": 1, "b": 1}, elo, idle, last, random.Random(1), 100.0)  # (no wait by default)
