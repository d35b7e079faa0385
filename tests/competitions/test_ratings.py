"""Ratings, pairwise statistics and SPRT on synthetic results drawn from known Elo gaps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from maag.stats import ratings as R

TRUE = {"a": -150.0, "b": -50.0, "c": 0.0, "d": 200.0}
DRAW = 0.3  # draw probability of every synthetic game


def play(rng: np.random.Generator, gap: float, draw: float = DRAW) -> float:
    """One synthetic game: the first player's points when it is `gap` Elo stronger."""
    s = R.elo_to_score(gap)
    d = min(draw, 2 * min(s, 1 - s))
    u = rng.random()
    return 1.0 if u < s - d / 2 else 0.5 if u < s + d / 2 else 0.0


def round_robin(rng: np.random.Generator, true: dict[str, float], per_pair: int,
                draw: float = DRAW) -> list[R.Outcome]:
    names = list(true)
    games: list[R.Outcome] = []
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            for k in range(per_pair):
                a, b = (x, y) if k % 2 == 0 else (y, x)
                games.append((a, b, play(rng, true[a] - true[b], draw)))
    return games


def centred(true: dict[str, float]) -> dict[str, float]:
    mean = sum(true.values()) / len(true)
    return {b: e - mean for b, e in true.items()}


def test_score_elo_round_trip() -> None:
    for e in (-800.0, -120.0, 0.0, 35.5, 400.0):
        assert R.score_to_elo(R.elo_to_score(e)) == pytest.approx(e)
    assert R.elo_to_score(400) == pytest.approx(10 / 11)
    assert R.score_to_elo(1.0) == math.inf and R.score_to_elo(0.0) == -math.inf


@pytest.mark.parametrize("draw_model", ["half", "davidson"])
def test_fit_recovers_known_strengths(draw_model: R.DrawModel) -> None:
    rng = np.random.default_rng(11)
    games = round_robin(rng, TRUE, per_pair=600, draw=DRAW if draw_model == "half" else 0.0)
    r = R.fit(games, draw_model=draw_model)
    truth = centred(TRUE)
    assert r.bots == ["d", "c", "b", "a"]
    assert not r.regularized
    for b, e in truth.items():
        assert abs(r.elo[b] - e) < 25, (b, r.elo[b], e)
        lo, hi = r.ci95[b]
        assert lo < r.elo[b] < hi and hi - lo < 80
    assert sum(r.elo.values()) == pytest.approx(0.0, abs=1e-6)
    assert r.standings()[0]["bot"] == "d" and r.standings()[0]["games"] == 1800


def test_davidson_draw_parameter() -> None:
    # Davidson's model with nu = 1 at equal strength gives P(draw) = 1/3.
    rng = np.random.default_rng(5)
    games = round_robin(rng, {"x": 0.0, "y": 0.0}, per_pair=3000, draw=1 / 3)
    r = R.fit(games, draw_model="davidson")
    assert r.nu == pytest.approx(1.0, abs=0.1)
    assert abs(r.elo["x"]) < 20


def test_anchor_and_difference() -> None:
    rng = np.random.default_rng(3)
    games = round_robin(rng, TRUE, per_pair=400)
    r = R.fit(games, anchor="c", anchor_elo=1500)
    assert r.elo["c"] == 1500 and r.ci95["c"] == (1500, 1500)
    d, (lo, hi) = r.diff("d", "a")
    assert lo < 350 < hi and lo < d < hi
    with pytest.raises(ValueError):
        R.fit(games, anchor="nobody")


def test_bootstrap_is_seeded_and_close_to_wald() -> None:
    rng = np.random.default_rng(4)
    games = round_robin(rng, TRUE, per_pair=100)
    b1 = R.fit(games, ci="bootstrap", bootstrap_samples=60, seed=9)
    b2 = R.fit(games, ci="bootstrap", bootstrap_samples=60, seed=9)
    w = R.fit(games)
    assert b1.ci95 == b2.ci95
    for b in TRUE:
        wl, wh = w.ci95[b]
        bl, bh = b1.ci95[b]
        assert 0.6 < (bh - bl) / (wh - wl) < 1.6


def test_perfect_scores_are_regularized() -> None:
    games: list[R.Outcome] = [("a", "b", 1.0)] * 10 + [("b", "c", 0.5)] * 4
    r = R.fit(games)
    assert r.regularized
    assert all(math.isfinite(r.elo[b]) for b in "abc")
    assert r.elo["a"] > r.elo["b"]
    plain = R.fit([("a", "b", 1.0), ("b", "a", 1.0)])
    assert not plain.regularized and plain.elo["a"] == pytest.approx(0.0, abs=1e-6)


def test_rejects_bad_outcomes() -> None:
    with pytest.raises(ValueError):
        R.fit([("a", "b", 0.7)])
    with pytest.raises(ValueError):
        R.fit([("a", "a", 1.0)])


def test_intervals_cover_the_truth_at_the_nominal_rate() -> None:
    rng = np.random.default_rng(2024)
    truth = centred(TRUE)
    covered = total = pair_covered = 0
    runs = 250
    for _ in range(runs):
        games = round_robin(rng, TRUE, per_pair=16)
        r = R.fit(games)
        for b, e in truth.items():
            lo, hi = r.ci95[b]
            covered += lo <= e <= hi
            total += 1
        cd = [g[2] if g[0] == "d" else 1 - g[2] for g in games if {g[0], g[1]} == {"c", "d"}]
        w, d = cd.count(1.0), cd.count(0.5)
        pair = R.pairwise(w, d, 16 - w - d)
        lo, hi = pair.elo_ci95
        pair_covered += lo <= 200 <= hi
    rate = covered / total
    # 1000 intervals: the binomial sd of the rate at 95% is 0.7 points.
    assert 0.92 <= rate <= 0.98, rate
    assert 0.88 <= pair_covered / runs <= 0.99, pair_covered / runs


def test_pairwise_numbers() -> None:
    p = R.pairwise(30, 10, 20)
    assert p.games == 60 and p.score == pytest.approx(35 / 60)
    lo, hi = p.score_ci95
    assert lo < p.score < hi
    assert p.elo == pytest.approx(R.score_to_elo(35 / 60))
    assert p.elo_ci95[0] < p.elo < p.elo_ci95[1]
    assert 0.5 < p.los < 1
    five = R.pairwise_pentanomial([2, 5, 10, 8, 5])
    assert five.games == 60 and five.score == pytest.approx((5 * 0.25 + 10 * 0.5 + 8 * 0.75 + 5) / 30)
    d = R.pairwise(10, 0, 0).as_dict()
    assert d["elo"] is None and d["score"] == 1.0


def run_sprt(rng: np.random.Generator, gap: float, elo0: float, elo1: float, pairs: bool) -> R.SprtResult:
    """Play synthetic games until the SPRT decides."""
    tri = [0, 0, 0]
    penta = [0, 0, 0, 0, 0]
    while True:
        for _ in range(10):
            s1 = play(rng, gap)
            s2 = play(rng, gap)
            tri[int(s1 * 2)] += 1
            tri[int(s2 * 2)] += 1
            penta[int((s1 + s2) * 2)] += 1
        res = R.sprt(penta if pairs else tri, elo0=elo0, elo1=elo1)
        if res.decision != "continue":
            return res


@pytest.mark.parametrize("pairs", [False, True])
def test_sprt_accepts_the_right_hypothesis(pairs: bool) -> None:
    rng = np.random.default_rng(77)
    stronger = [run_sprt(rng, 80.0, 0.0, 40.0, pairs) for _ in range(20)]
    equal = [run_sprt(rng, 0.0, 0.0, 40.0, pairs) for _ in range(20)]
    # alpha = beta = 0.05: each run errs with probability at most about 5%.
    assert sum(r.decision == "H1" for r in stronger) >= 17
    assert sum(r.decision == "H0" for r in equal) >= 17
    r = stronger[0]
    assert r.upper == pytest.approx(math.log(0.95 / 0.05)) and r.lower == -r.upper
    assert (r.llr >= r.upper) if r.decision == "H1" else (r.llr <= r.lower)


def test_sprt_input_checks() -> None:
    assert R.sprt([0, 0, 0], elo0=0, elo1=5).decision == "continue"
    with pytest.raises(ValueError):
        R.sprt([1, 2, 3], elo0=5, elo1=0)
    with pytest.raises(ValueError):
        R.sprt([1, 2, 3, 4], elo0=0, elo1=5)


def test_bots_without_games_and_separate_groups() -> None:
    rng = np.random.default_rng(8)
    games = round_robin(rng, TRUE, per_pair=100)
    base = R.fit(games)
    more = R.fit(games, names=[*TRUE, "newcomer"])
    assert more.elo["newcomer"] == 0.0 and more.ci95["newcomer"] == (-math.inf, math.inf)
    for b in TRUE:  # a bot without games changes nothing
        assert more.elo[b] == pytest.approx(base.elo[b], abs=1e-6)
        assert more.ci95[b] == pytest.approx(base.ci95[b], abs=1e-6)
    assert not more.regularized
    # Two groups that never met: each is centred by the prior, with finite intervals.
    two = [("a", "b", 1.0), ("b", "a", 0.5)] * 5 + [("c", "d", 1.0), ("d", "c", 0.5)] * 5
    r = R.fit(two)
    assert r.regularized
    assert r.elo["a"] > r.elo["b"] and r.elo["c"] > r.elo["d"]
    assert r.elo["a"] == pytest.approx(-r.elo["b"], abs=1e-3)
    assert r.elo["c"] == pytest.approx(r.elo["a"], abs=1e-3)
    assert all(math.isfinite(lo) and math.isfinite(hi) for lo, hi in r.ci95.values())
