"""Ratings and match statistics: Bradley-Terry / Elo by maximum likelihood, pairwise scores
with intervals, and the sequential probability ratio test (SPRT).

Conventions (all functions of this module):

- A game outcome is `(first, second, score)` with `score` in {1, 0.5, 0} from `first`'s side
  (a win, a draw, a loss). Seats do not matter here: balanced schedules (each pairing
  played from both seats, see `maag tournament`) cancel the first-player advantage.
- Elo is *logistic* Elo: a gap of `e` means an expected score of `1 / (1 + 10**(-e/400))`.
- Two draw models for the rating fit, chosen by `draw_model`:

  * ``"half"`` (default, as Ordo and the Elo of `maag match`): a draw is half a win and half
    a loss, and the fit maximises the Bradley-Terry quasi-likelihood
    ``sum s*log p + (1-s)*log(1-p)`` with ``p`` the expected score. The Elo gaps are then
    score gaps. Intervals are scaled by the Pearson dispersion (draws make results less
    variable than win/loss coin flips; without the correction the intervals are too wide),
    shrunk towards 1 by DISPERSION_PRIOR_DOF pseudo-games (so a handful of draws does not
    make the intervals vanish).
  * ``"davidson"``: Davidson's draw model ``P(win) : P(draw) : P(loss) =
    pi_a : nu*sqrt(pi_a*pi_b) : pi_b`` with ``pi = 10**(elo/400)`` and one draw parameter
    ``nu`` fitted with the ratings. Elo gaps are gaps among decisive games (larger than
    score gaps when draws are common); a proper likelihood, so no dispersion correction.

- Ratings are anchored: by default their mean is 0; with `anchor=NAME` that bot is fixed at
  `anchor_elo` (and its interval has zero width).
- 95% intervals come from the likelihood (the inverse observed information at the maximum,
  i.e. Wald intervals; ``ci="wald"``) or from a seeded bootstrap over games
  (``ci="bootstrap"``, percentile intervals).
- The maximum likelihood estimate does not exist when some group of bots never lost a game
  to the others (e.g. a bot with 100%), or when groups of bots never met: the win/draw graph
  is not strongly connected. Only then the fit adds a virtual opponent rated 0 with which
  every bot drew `virtual_draws` games (a weak prior that pulls towards the mean), and says
  so in `Ratings.regularized`.
- Bots given in `names` without any game are left out of the fit (rating 0, infinite
  interval).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

# scipy is imported where it is used, not here: it takes about a second to import, and every
# `maag` process imports this module (the referee reports a match's score) while most never fit
# ratings. tests/server/test_match_stats.py checks Z95 against scipy's norm.ppf(0.975).
K = math.log(10.0) / 400.0  # natural-log units per Elo point
Z95 = 1.959963984540054  # float(scipy.stats.norm.ppf(0.975)), bit for bit
DISPERSION_PRIOR_DOF = 20.0  # the dispersion estimate counts this many pseudo-games at dispersion 1

DrawModel = Literal["half", "davidson"]
CiMethod = Literal["wald", "bootstrap"]
Outcome = tuple[str, str, float]


def elo_to_score(elo: float) -> float:
    """The expected score of a player `elo` points stronger than its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    """The Elo gap that gives expected score `score`; +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def wilson(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion score/n (a draw may count 0.5 in score)."""
    if n <= 0:
        return (0.0, 1.0)
    p = score / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denom
    # At p = 0 or 1 the bound is exactly 0 or 1 (rounding would leave it a hair inside).
    return (0.0 if p <= 0 else max(0.0, centre - half), 1.0 if p >= 1 else min(1.0, centre + half))


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------------------
# Pairwise statistics (one bot against another)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairStats:
    """The result of one bot against another, from the first bot's side.

    `score` is the mean points per game (win 1, draw 0.5); `score_ci95` its normal
    approximation interval; `elo` and `elo_ci95` the same mapped through `score_to_elo`
    (+-inf at 0% or 100%); `los` the likelihood of superiority (probability that the first
    bot is the stronger one, from decisive games).
    """

    games: int
    wins: int
    draws: int
    losses: int
    score: float
    score_ci95: tuple[float, float]
    elo: float
    elo_ci95: tuple[float, float]
    los: float
    stderr: float  # standard error of `score`

    @property
    def draw_ratio(self) -> float:
        return self.draws / self.games if self.games else 0.0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; infinite Elo values become None."""
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "score": self.score, "score_ci95": list(self.score_ci95),
            "elo": _finite(self.elo), "elo_ci95": [_finite(x) for x in self.elo_ci95],
            "los": self.los, "draw_ratio": self.draw_ratio,
        }


def _pair_stats(wins: int, draws: int, losses: int, values: Sequence[float],
                counts: Sequence[float]) -> PairStats:
    games = wins + draws + losses
    n = float(sum(counts))
    if games == 0 or n == 0:
        return PairStats(0, 0, 0, 0, 0.5, (0.0, 1.0), 0.0, (-math.inf, math.inf), 0.5, math.inf)
    mean = sum(v * c for v, c in zip(values, counts, strict=True)) / n
    var = sum(c * (v - mean) ** 2 for v, c in zip(values, counts, strict=True)) / n
    se = math.sqrt(var / n)
    if var > 0:
        lo, hi = max(0.0, mean - Z95 * se), min(1.0, mean + Z95 * se)
    else:  # every game (or pair) ended alike: the normal interval would be a point
        lo, hi = wilson(mean * n, int(n))
    # scipy.stats.norm.cdf is scipy.special.ndtr (bit for bit), without importing scipy.stats
    # (half a second of every `maag match`'s end).
    from scipy.special import ndtr  # (see the imports)

    decisive = wins + losses
    los = 0.5 if decisive == 0 else float(ndtr((wins - losses) / math.sqrt(decisive)))
    return PairStats(games, wins, draws, losses, mean, (lo, hi), score_to_elo(mean),
                     (score_to_elo(lo), score_to_elo(hi)), los, se)


def pairwise(wins: int, draws: int, losses: int) -> PairStats:
    """Score, Elo gap and their 95% intervals from independent games (trinomial model)."""
    return _pair_stats(wins, draws, losses, (1.0, 0.5, 0.0), (wins, draws, losses))


def pairwise_pentanomial(pairs: Sequence[int]) -> PairStats:
    """The same from game *pairs* (one game from each seat with mirrored seeds).

    `pairs[k]` counts the pairs in which the first bot scored k/2 points out of 2
    (k = 0..4). The variance is taken over pairs, which is the right one when the two games
    of a pair share their random draws (their results are then correlated).
    """
    if len(pairs) != 5:
        raise ValueError("pentanomial counts must have 5 entries (pair scores 0, 0.5, 1, 1.5, 2)")
    # Game counts only for the W/D/L columns: each pair of total k/2 is split as evenly as
    # the totals allow (0: LL, 1: DL, 2: DD, 3: WD, 4: WW; a WL pair also totals 2).
    wins = pairs[3] + 2 * pairs[4]
    losses = 2 * pairs[0] + pairs[1]
    draws = pairs[1] + 2 * pairs[2] + pairs[3]
    return _pair_stats(wins, draws, losses, (0.0, 0.25, 0.5, 0.75, 1.0), pairs)


# ---------------------------------------------------------------------------------------
# Rating fit
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ratings:
    """Fitted ratings of a set of bots. Dict fields are keyed by bot name."""

    bots: list[str]  # sorted by Elo, strongest first
    elo: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    stderr: dict[str, float]
    games: dict[str, int]
    score: dict[str, float]  # points (win 1, draw 0.5)
    draw_model: str
    ci_method: str
    anchor: str | None  # None: the mean rating is 0
    regularized: bool  # virtual draws were added because the plain MLE does not exist
    nu: float | None = None  # Davidson's draw parameter
    dispersion: float = 1.0  # the quasi-likelihood dispersion used to scale the intervals
    covariance: np.ndarray | None = field(default=None, repr=False, compare=False)

    def standings(self) -> list[dict[str, Any]]:
        """One dict per bot, strongest first: bot, games, score, elo, elo_ci95."""
        return [
            {"bot": b, "games": self.games[b], "score": self.score[b], "elo": self.elo[b],
             "elo_ci95": [self.ci95[b][0], self.ci95[b][1]]}
            for b in self.bots
        ]

    def diff(self, a: str, b: str) -> tuple[float, tuple[float, float]]:
        """Elo of `a` minus Elo of `b` with a 95% interval (from the joint covariance; Wald
        fits only, otherwise the intervals of a and b are combined as if independent)."""
        d = self.elo[a] - self.elo[b]
        if self.covariance is not None:
            i, j = self._index[a], self._index[b]
            c = self.covariance
            var = float(c[i, i] + c[j, j] - 2 * c[i, j])
        else:
            var = self.stderr[a] ** 2 + self.stderr[b] ** 2
        se = math.sqrt(max(var, 0.0))
        return d, (d - Z95 * se, d + Z95 * se)

    @property
    def _index(self) -> dict[str, int]:
        return {b: i for i, b in enumerate(sorted(self.elo))}


@dataclass
class _Table:
    """Results aggregated per unordered pair (i < j): wins, draws, losses of i against j."""

    names: list[str]
    i: np.ndarray
    j: np.ndarray
    w: np.ndarray
    d: np.ndarray
    lo: np.ndarray

    @property
    def n(self) -> np.ndarray:
        return self.w + self.d + self.lo


def _table(games: Iterable[Outcome], names: Sequence[str] | None = None) -> _Table:
    games = list(games)
    seen = sorted({g[0] for g in games} | {g[1] for g in games} | set(names or ()))
    idx = {b: k for k, b in enumerate(seen)}
    acc: dict[tuple[int, int], list[float]] = {}
    for a, b, s in games:
        if a == b:
            raise ValueError(f"a game of {a!r} against itself")
        if s not in (0, 0.5, 1):
            raise ValueError(f"score must be 0, 0.5 or 1, not {s!r}")
        ia, ib = idx[a], idx[b]
        if ia > ib:
            ia, ib, s = ib, ia, 1 - s
        cell = acc.setdefault((ia, ib), [0.0, 0.0, 0.0])
        cell[0 if s == 1 else 1 if s == 0.5 else 2] += 1
    keys = sorted(acc)
    arr = np.array([acc[k] for k in keys], dtype=float).reshape(-1, 3)
    return _Table(seen, np.array([k[0] for k in keys], dtype=int), np.array([k[1] for k in keys], dtype=int),
                  arr[:, 0], arr[:, 1], arr[:, 2])


def _mle_exists(t: _Table) -> bool:
    """The MLE exists iff the graph with an edge a->b whenever a scored against b is
    strongly connected (Zermelo/Ford)."""
    m = len(t.names)
    if m <= 1:
        return True
    from scipy import sparse  # (see the imports)
    from scipy.sparse import csgraph

    rows = np.concatenate([t.i[(t.w + t.d) > 0], t.j[(t.lo + t.d) > 0]])
    cols = np.concatenate([t.j[(t.w + t.d) > 0], t.i[(t.lo + t.d) > 0]])
    g = sparse.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, m))
    ncomp, _ = csgraph.connected_components(g, directed=True, connection="strong")
    return bool(ncomp == 1)


def _nll_half(theta: np.ndarray, t: _Table) -> tuple[float, np.ndarray, np.ndarray]:
    """Negative quasi-log-likelihood of the 'half' model, its gradient and Hessian in the
    natural-log rating units `theta` (one entry per bot)."""
    x = theta[t.i] - theta[t.j]
    s = t.w + 0.5 * t.d  # points of i
    n = t.n
    # log sigmoid, stably
    lp = -np.logaddexp(0.0, -x)
    lq = -np.logaddexp(0.0, x)
    f = -float(np.sum(s * lp + (n - s) * lq))
    p = np.exp(lp)
    gpair = -(s - n * p)
    m = len(theta)
    g = np.zeros(m)
    np.add.at(g, t.i, gpair)
    np.add.at(g, t.j, -gpair)
    h = np.zeros((m, m))
    wgt = n * p * (1 - p)
    np.add.at(h, (t.i, t.i), wgt)
    np.add.at(h, (t.j, t.j), wgt)
    np.add.at(h, (t.i, t.j), -wgt)
    np.add.at(h, (t.j, t.i), -wgt)
    return f, g, h


def _nll_davidson(params: np.ndarray, t: _Table) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of Davidson's model and its gradient; `params` is theta
    (per bot) followed by log(nu)."""
    theta, lnu = params[:-1], params[-1]
    ti, tj = theta[t.i], theta[t.j]
    la, lb, lc = ti, tj, lnu + 0.5 * (ti + tj)
    ld = np.logaddexp(np.logaddexp(la, lb), lc)
    n = t.n
    f = -float(np.sum(t.w * la + t.d * lc + t.lo * lb - n * ld))
    pa, pb, pc = np.exp(la - ld), np.exp(lb - ld), np.exp(lc - ld)
    gi = -(t.w + 0.5 * t.d - n * (pa + 0.5 * pc))
    gj = -(t.lo + 0.5 * t.d - n * (pb + 0.5 * pc))
    g = np.zeros(len(params))
    np.add.at(g, t.i, gi)
    np.add.at(g, t.j, gj)
    g[-1] = -float(np.sum(t.d - n * pc))
    return f, g


def _num_hessian(grad: Any, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    m = len(x)
    h = np.zeros((m, m))
    for k in range(m):
        e = np.zeros(m)
        e[k] = eps
        h[:, k] = (grad(x + e) - grad(x - e)) / (2 * eps)
    return 0.5 * (h + h.T)


PRIOR = "\x00prior"  # the virtual opponent of a regularized fit (fixed at rating 0)


def _fit_point(t: _Table, draw_model: DrawModel, real_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                   float | None, float]:
    """The estimate in natural-log units with bot 0 fixed at 0, the covariance of all
    ratings (bot 0's row and column zero), nu, and the dispersion (estimated on the rows
    flagged in `real_rows`, i.e. without virtual games)."""
    m = len(t.names)
    if m == 1:
        return np.zeros(1), np.zeros((1, 1)), None, 1.0
    from scipy import optimize  # (see the imports)

    nu: float | None = None
    if draw_model == "half":
        def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
            f, g, _ = _nll_half(np.concatenate([[0.0], z]), t)
            return f, g[1:]

        def hess(z: np.ndarray) -> np.ndarray:
            return _nll_half(np.concatenate([[0.0], z]), t)[2][1:, 1:]

        res = optimize.minimize(fun, np.zeros(m - 1), jac=True, hess=hess, method="trust-exact",
                                options={"gtol": 1e-9})
        theta = np.concatenate([[0.0], res.x])
        h = hess(res.x)
        # Pearson dispersion: observed per-game variance around the fitted score over the
        # binomial variance the quasi-likelihood assumes.
        r = real_rows
        x = theta[t.i[r]] - theta[t.j[r]]
        p = 1.0 / (1.0 + np.exp(-x))
        sq = t.w[r] * (1 - p) ** 2 + t.d[r] * (0.5 - p) ** 2 + t.lo[r] * p ** 2
        # Shrunk towards 1 (few games give a noisy estimate; all draws would give 0).
        dof = max(float(np.sum(t.n[r])) - (m - 1), 0.0)
        disp = float((np.sum(sq / (p * (1 - p))) + DISPERSION_PRIOR_DOF) / (dof + DISPERSION_PRIOR_DOF))
    else:
        def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
            f, g = _nll_davidson(np.concatenate([[0.0], z]), t)
            return f, g[1:]

        z0 = np.zeros(m)  # ratings 1..m-1 then log nu
        res = optimize.minimize(fun, z0, jac=True, method="BFGS", options={"gtol": 1e-9})
        theta = np.concatenate([[0.0], res.x[:-1]])
        nu = float(math.exp(res.x[-1]))
        h = _num_hessian(lambda z: fun(z)[1], res.x)
        disp = 1.0
    cov_free = np.linalg.pinv(h) * disp
    cov = np.zeros((m, m))
    cov[1:, 1:] = cov_free[: m - 1, : m - 1]
    return theta, cov, nu, disp


def _with_prior(t: _Table, virtual_draws: float) -> _Table:
    """`t` with a virtual opponent (index 0) that drew `virtual_draws` games with every bot."""
    m = len(t.names)
    k = np.arange(1, m + 1)
    zeros = np.zeros(m)
    return _Table([PRIOR, *t.names], np.concatenate([np.zeros(m, dtype=int), t.i + 1]),
                  np.concatenate([k, t.j + 1]), np.concatenate([zeros, t.w]),
                  np.concatenate([np.full(m, float(virtual_draws)), t.d]), np.concatenate([zeros, t.lo]))


def fit(games: Iterable[Outcome], *, names: Sequence[str] | None = None, draw_model: DrawModel = "half",
        anchor: str | None = None, anchor_elo: float = 0.0, ci: CiMethod = "wald",
        bootstrap_samples: int = 200, seed: int = 0, virtual_draws: float = 1.0) -> Ratings:
    """Fit Elo ratings to game outcomes by maximum likelihood (see the module docstring).

    `names` adds bots that may have no games yet: they are left out of the fit and get
    rating 0 with an infinite interval (an anchor without games is ignored: the mean of the
    bots with games is 0). Raises ValueError on a malformed outcome or unknown anchor.
    """
    games = list(games)
    full = _table(games, names)
    if anchor is not None and anchor not in full.names:
        raise ValueError(f"anchor {anchor!r} is not among the bots")
    played_names = sorted({g[0] for g in games} | {g[1] for g in games})
    t = _table(games, played_names)
    m = len(played_names)
    reg = m > 1 and not _mle_exists(t)
    if reg:
        theta, cov, nu, disp = _fit_point(_with_prior(t, virtual_draws), draw_model,
                                          np.arange(m + len(t.i)) >= m)
        theta, cov = theta[1:], cov[1:, 1:]  # relative to the virtual opponent, which is fixed
    elif m:
        theta, cov, nu, disp = _fit_point(t, draw_model, np.ones(len(t.i), dtype=bool))
    else:
        theta, cov, nu, disp = np.zeros(0), np.zeros((0, 0)), None, 1.0
    if anchor is not None and anchor not in played_names:
        anchor = None
    # Anchor: a linear map A of the ratings (centre them, or subtract the anchor's).
    if anchor is None:
        a = np.eye(m) - np.full((m, m), 1.0 / max(m, 1))
    else:
        a = np.eye(m)
        a[:, played_names.index(anchor)] -= 1.0
    elo_p = (a @ theta) / K + (anchor_elo if anchor is not None else 0.0)
    cov_p = a @ cov @ a.T / K**2
    se_p = np.sqrt(np.clip(np.diag(cov_p), 0.0, None))
    # Bots without games: rating 0, not identified.
    where = {b: k for k, b in enumerate(played_names)}
    elo = {b: float(elo_p[where[b]]) if b in where else 0.0 for b in full.names}
    se = {b: float(se_p[where[b]]) if b in where else math.inf for b in full.names}
    if ci == "bootstrap":
        lo, hi = _bootstrap(games, full.names, draw_model, anchor, anchor_elo, virtual_draws,
                            bootstrap_samples, seed)
        ci95 = {b: (float(lo[k]), float(hi[k])) if b in where else (-math.inf, math.inf)
                for k, b in enumerate(full.names)}
        covariance = None
    else:
        ci95 = {b: (elo[b] - Z95 * se[b], elo[b] + Z95 * se[b]) for b in full.names}
        covariance = np.zeros((len(full.names), len(full.names)))
        idx = [full.names.index(b) for b in played_names]
        covariance[np.ix_(idx, idx)] = cov_p
        for b in full.names:
            if b not in where:
                k = full.names.index(b)
                covariance[k, k] = math.inf
    n_games = {b: 0 for b in full.names}
    points = {b: 0.0 for b in full.names}
    for x, y, sc in games:
        n_games[x] += 1
        n_games[y] += 1
        points[x] += sc
        points[y] += 1 - sc
    order = sorted(full.names, key=lambda b: (-elo[b], b))
    return Ratings(
        bots=order, elo=elo, ci95=ci95, stderr=se, games=n_games, score=points,
        draw_model=draw_model, ci_method=ci, anchor=anchor, regularized=reg, nu=nu,
        dispersion=disp, covariance=covariance,
    )


def _bootstrap(games: list[Outcome], names: list[str], draw_model: DrawModel, anchor: str | None,
               anchor_elo: float, virtual_draws: float, samples: int,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = np.zeros((samples, len(names)))
    for k in range(samples):
        pick = rng.integers(0, len(games), len(games))
        r = fit([games[p] for p in pick], names=names, draw_model=draw_model, anchor=anchor,
                anchor_elo=anchor_elo, ci="wald", virtual_draws=virtual_draws)
        out[k] = [r.elo[b] for b in names]
    return np.percentile(out, 2.5, axis=0), np.percentile(out, 97.5, axis=0)


# ---------------------------------------------------------------------------------------
# SPRT
# ---------------------------------------------------------------------------------------

SprtDecision = Literal["H0", "H1", "continue"]


@dataclass(frozen=True)
class SprtResult:
    """The state of a sequential test of H0: elo = elo0 against H1: elo = elo1.

    `decision` is "H1" (accept that the first bot is at least `elo1` stronger; strictly:
    the data favour elo1 over elo0 by the required margin), "H0" (accept that it is at most
    `elo0` stronger) or "continue". `llr` is the log-likelihood ratio; the test stops when
    it leaves (`lower`, `upper`) = (log(beta/(1-alpha)), log((1-beta)/alpha)).
    """

    decision: SprtDecision
    llr: float
    lower: float
    upper: float
    elo0: float
    elo1: float
    alpha: float
    beta: float
    samples: int  # games (trinomial) or game pairs (pentanomial)

    def as_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "llr": self.llr, "lower": self.lower, "upper": self.upper,
                "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "samples": self.samples}


def _mle_with_mean(values: np.ndarray, probs: np.ndarray, mean: float) -> np.ndarray:
    """The distribution on `values` closest (max likelihood) to the empirical `probs` whose
    mean is `mean`: p_i / (1 + lam * (v_i - mean)), with lam solving sum = 1."""
    dv = values - mean

    def h(lam: float) -> float:
        return float(np.sum(probs * dv / (1.0 + lam * dv)))

    # 1 + lam*dv > 0 for every value: lam in (-1/max(dv), -1/min(dv)).
    lo = -1.0 / dv.max() if dv.max() > 0 else -1e9
    hi = -1.0 / dv.min() if dv.min() < 0 else 1e9
    eps = 1e-12 * (hi - lo)
    from scipy import optimize  # (see the imports)

    lam = optimize.brentq(h, lo + eps, hi - eps, xtol=1e-14)
    p = probs / (1.0 + lam * dv)
    return np.asarray(p / p.sum())


def sprt(counts: Sequence[int], *, elo0: float, elo1: float, alpha: float = 0.05,
         beta: float = 0.05) -> SprtResult:
    """Generalized SPRT (as fishtest's `LLR_logistic`): a multinomial likelihood ratio
    between the best distributions with expected score `elo_to_score(elo1)` and
    `elo_to_score(elo0)`, given the outcome counts so far.

    `counts` is either trinomial, (losses, draws, wins) of the first bot, or pentanomial,
    five counts of game pairs in which it scored 0, 0.5, 1, 1.5, 2 points (use this when the
    two games of a pair share their random seed). Empty cells get 1e-3 pseudo-counts so the
    test is defined from the first game on.
    """
    if not elo0 < elo1:
        raise ValueError("need elo0 < elo1")
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must be in (0, 1)")
    c = np.asarray(counts, dtype=float)
    if len(c) == 3:
        values = np.array([0.0, 0.5, 1.0])
    elif len(c) == 5:
        values = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    else:
        raise ValueError("counts must be trinomial (3 entries) or pentanomial (5 entries)")
    n = int(c.sum())
    lower, upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    if n == 0:
        return SprtResult("continue", 0.0, lower, upper, elo0, elo1, alpha, beta, 0)
    c = np.where(c > 0, c, 1e-3)
    probs = c / c.sum()
    p0 = _mle_with_mean(values, probs, elo_to_score(elo0))
    p1 = _mle_with_mean(values, probs, elo_to_score(elo1))
    llr = float(n * np.sum(probs * (np.log(p1) - np.log(p0))))
    decision: SprtDecision = "H1" if llr >= upper else "H0" if llr <= lower else "continue"
    return SprtResult(decision, llr, lower, upper, elo0, elo1, alpha, beta, n)
