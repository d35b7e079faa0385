"""The thesis's human test as a page: how people fared against the bots, by the experience
they stated before their game (the short form of maag.server.web.play).

Every finished game of match `web:play` counts once: a win of the person's seat scores 1, a
draw 1/2; each line gives the games, the person's score and its 95% Wilson interval
(maag.stats.wilson), per stated experience and per opponent. Aborted games are left out.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from maag.server.storage.base import Storage
from maag.server.web.play import EXPERIENCE, PLAY_MATCH
from maag.stats import wilson

__all__ = ["people_summary"]


def people_summary(storage: Storage, limit: int = 100_000) -> dict[str, Any]:
    """{"rows": [{experience, opponent, games, score, score_pct, ci95_pct}], "games": N}; one row
    per (experience, opponent) pair played, and one per experience over all opponents
    (opponent "all")."""
    tally: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    n = 0
    for g in storage.list_games(match_id=PLAY_MATCH, status="finished", limit=limit):
        if g.winner is None:
            continue
        replay = storage.get_replay(g.id) or {}
        tags = replay.get("tags", {})
        try:
            human = int(tags.get("Human", 0)) - 1
        except (TypeError, ValueError):
            continue
        if human not in (0, 1):
            continue
        score = 0.5 if g.winner == -1 else float(g.winner == human)
        exp = str(tags.get("Experience") or "not stated")
        n += 1
        for key in ((exp, str(tags.get("Opponent", "?"))), (exp, "all")):
            tally[key][0] += score
            tally[key][1] += 1
    order = {e: i for i, e in enumerate((*EXPERIENCE, "not stated"))}
    rows = []
    for (exp, opp), (score, games) in sorted(tally.items(), key=lambda kv: (order.get(kv[0][0], 99),
                                                                               kv[0][1] != "all", kv[0][1])):
        lo, hi = wilson(score, int(games))
        rows.append({"experience": exp, "opponent": opp, "games": int(games), "score": score,
                     "score_pct": round(100 * score / games, 1),
                     "ci95_pct": [round(100 * lo, 1), round(100 * hi, 1)]})
    return {"rows": rows, "games": n}
