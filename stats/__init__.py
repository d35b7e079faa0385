"""maag.stats: the statistics of results, for every part of maag (one implementation):
Wilson score intervals, a pair's score, Elo gap and likelihood of superiority with 95%
intervals (`pairwise`, from games or from mirrored game pairs), Bradley-Terry / Elo ratings
by maximum likelihood (`fit`), and the SPRT. Imports nothing of maag.

Infinite Elo is kept as +-inf (a 100% score has no finite Elo gap); the JSON forms
(`as_dict`) write None for it.

Modules:
  ratings  the reference implementation: `wilson`, `pairwise` / `pairwise_pentanomial`,
           `fit` (Bradley-Terry / Elo with intervals), `sprt`
  live     ratings a ladder keeps current for any number of bots: a step per game, a
           refit on a timer"""

from .ratings import (
    PairStats,
    Ratings,
    SprtResult,
    elo_to_score,
    fit,
    pairwise,
    pairwise_pentanomial,
    score_to_elo,
    sprt,
    wilson,
)

__all__ = ["PairStats", "Ratings", "SprtResult", "elo_to_score", "fit", "pairwise", "pairwise_pentanomial",
           "score_to_elo", "sprt", "wilson"]
