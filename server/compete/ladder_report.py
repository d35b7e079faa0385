"""What a ladder tells: its events (`LadderEvent`, for the command line's log and the web
view), its standings from the database (`ladder_standings`) and the standings files it
publishes (HTML, CSV, JSON; written whole, at once). compete/ladder.py's `Ladder` runs the
ladder; this module only says what happened.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from maag.server.compete.formats import Standings, rate, to_csv, to_html
from maag.server.compete.strikes import verdict_counts
from maag.server.storage.base import Storage
from maag.stats import ratings

__all__ = ["LadderEvent", "ladder_match_id", "ladder_standings", "outcome", "publish"]

LOG = logging.getLogger("maag.server.compete.ladder")  # (the ladder's log)


def ladder_match_id(name: str) -> str:
    return f"ladder:{name}"


@dataclass(frozen=True, slots=True)
class LadderEvent:
    """kind: standby (another process schedules this ladder: waiting to take over), leading
    (this process schedules it now), listening, join, leave, paired (two bots paired for a
    game whose id is not known yet: refereed by a fleet member or a Dask worker), start (the
    game `game_id` began), finish, struck (the
    strike policy took `bot` out; `reason` is the rule), voided (the host voided game
    `game_id`: left out of the ratings), pardoned (the host cleared `bot`'s strikes; `reason`
    is why)."""

    kind: str
    bot: str | None = None
    seats: tuple[str, str] | None = None
    winner: int | None = None
    reason: str | None = None
    game_id: int | None = None
    games: int = 0


def outcome(seats: tuple[str, str], winner: int | None) -> ratings.Outcome | None:
    if winner is None:
        return None
    return (seats[0], seats[1], {0: 1.0, 1: 0.0, -1: 0.5}[winner])


def ladder_standings(storage: Storage, name: str, anchor: str | None = None,
                     extra_bots: set[str] | None = None) -> Standings:
    """The ladder's standings from the database (every finished game of `ladder:NAME`)."""
    outcomes = []
    played = []
    for g in reversed(storage.list_games(match_id=ladder_match_id(name), status="finished", limit=2**62)):
        o = outcome(g.seats, g.winner)
        if o is not None:
            outcomes.append(o)
            played.append((g.seats[0], g.seats[1], g.verdict))
    names = sorted({x for o in outcomes for x in o[:2]} | set(extra_bots or ()))
    return rate(name, "ladder", names, outcomes, anchor=anchor, description=f"Ladder {name}.",
                verdicts=verdict_counts(played))


def publish(name: str, st: Standings, *, html: str | None, csv: str | None, json_path: str | None) -> None:
    """Write ladder `name`'s standings `st` to the files named (None: not that one)."""
    for path, text in ((html, lambda: to_html(st)), (csv, lambda: to_csv(st)),
                       (json_path, lambda: json.dumps(st.summary(), indent=1))):
        if path:
            try:
                _write_atomic(path, text())
            except OSError as e:
                # A leaderboard file that cannot be written (a folder without rights, a
                # full disk) is the host's to fix; the ladder and its games go on.
                LOG.error("ladder %s: could not write %s: %s", name, path, e)


def _write_atomic(path: str, text: str) -> None:
    """Replace `path` at once (a web server never shows a half-written leaderboard); its
    folder is made if it is missing (the docs' /var/www/html/ladder/ on a new machine)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, p)
