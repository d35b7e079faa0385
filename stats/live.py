"""Ratings a ladder keeps current for any number of bots: a step per game, a refit on a timer.

`ratings.fit` is the reference (intervals, anchors, two draw models), but it solves with a
dense bots x bots matrix: at thousands of bots a fit after every game costs more than the
games. A ladder needs something else between its published fits:

- `LiveRatings.update`: after a game, the two bots' ratings take one step of the online
  Bradley-Terry fit (an Elo step whose size shrinks with the bot's games, so a newcomer
  moves fast and a veteran slowly): O(1), whatever the ladder's size;
- `fit_points`: the maximum-likelihood fit of the whole history ("half" draw model, as
  `ratings.fit`'s default, mean rating 0) by L-BFGS over the pairs that met: each iteration
  is O(pairs played), with a weak Gaussian prior (`prior_games` virtual draws against the
  mean) so that it exists when some bot never lost; the ladder runs it on a timer, off the
  event loop, and `LiveRatings.replace` takes its result (replaying the games that finished
  meanwhile).

Same conventions as `ratings`: an outcome is (first, second, score of first), logistic Elo.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from .ratings import K, Outcome, _table

K_NEW = 64.0
"""Elo step of a bot's first game; after n games the step is K_NEW / sqrt(1 + n / 8),
never below K_MIN."""
K_MIN = 8.0


def expected(elo_a: float, elo_b: float) -> float:
    """The expected score of a against b."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


class LiveRatings:
    """Elo ratings updated game by game (unrated bots count as 0)."""

    def __init__(self) -> None:
        self.elo: dict[str, float] = {}
        self.games: Counter[str] = Counter()

    def step(self, bot: str) -> float:
        return max(K_MIN, K_NEW / math.sqrt(1.0 + self.games[bot] / 8.0))

    def update(self, a: str, b: str, score: float) -> None:
        """One game: a scored `score` (1, 0.5 or 0) against b."""
        self._move(a, b, score)
        self.games[a] += 1
        self.games[b] += 1

    def replace(self, elo: Mapping[str, float], since: Iterable[Outcome] = ()) -> None:
        """Take a full fit's ratings, then the games that finished after its snapshot (their
        games are counted already: `update` saw them)."""
        self.elo = {**self.elo, **elo}
        for a, b, s in since:
            self._move(a, b, s)

    def _move(self, a: str, b: str, score: float) -> None:
        ea, eb = self.elo.get(a, 0.0), self.elo.get(b, 0.0)
        surprise = score - expected(ea, eb)
        self.elo[a] = ea + self.step(a) * surprise
        self.elo[b] = eb - self.step(b) * surprise


def fit_points(games: Iterable[Outcome], prior_games: float = 1.0) -> dict[str, float]:
    """Elo of every bot of `games` by maximum likelihood ("half" draw model), mean 0, with
    `prior_games` virtual draws of each bot against the mean. O(pairs) memory and time per
    iteration: sparse in the pairs that met."""
    t = _table(games)  # per pair that met: wins, draws, losses (and the outcomes checked)
    names = t.names
    if not names:
        return {}
    i, j, n = t.i, t.j, t.n
    pts = t.w + 0.5 * t.d
    m = len(names)

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        x = theta[i] - theta[j]
        lp, lq = -np.logaddexp(0.0, -x), -np.logaddexp(0.0, x)
        f = -float(np.sum(pts * lp + (n - pts) * lq))
        gp = n * np.exp(lp) - pts
        g: np.ndarray = np.bincount(i, gp, m) - np.bincount(j, gp, m)
        # The prior: prior_games draws against a bot rated 0 (the mean).
        lp0, lq0 = -np.logaddexp(0.0, -theta), -np.logaddexp(0.0, theta)
        f -= float(np.sum(0.5 * prior_games * (lp0 + lq0)))
        g += prior_games * (np.exp(lp0) - 0.5)
        return f, g

    from scipy import optimize  # here, not at the top: see ratings' imports

    res = optimize.minimize(nll, np.zeros(m), jac=True, method="L-BFGS-B",
                            options={"maxiter": 500, "gtol": 1e-7})
    theta = res.x - res.x.mean()
    return {b: float(theta[k] / K) for k, b in enumerate(names)}
