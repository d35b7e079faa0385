"""Tournament formats, schedules and standings (no I/O): round robin, gauntlet and Swiss.

Every pairing of two bots is played as `games_per_pair / 2` game *pairs*: the two games of a
pair use the same referee seed (the same deal and the same random draws) with the seats
swapped, so the luck of the draw cancels (`deals=independent` in the spec's extras gives every
game its own seed instead). A scheduled game has a deterministic key, so a restarted runner
finds the same schedule in the database (see storage/tournaments.py).

Seeds derive from a base: `--seed` for a reproducible tournament (whoever knows it can compute
every deal), else a secret drawn from the OS when the tournament is first created and kept in
the database, never shown to a bot. Which two games of a pairing share a deal is a shuffle
drawn from the same base. What mirroring still trusts: a bot that remembers its games may
recognise a deal it has seen from the other seat (docs/competitions.md).

- round robin: every bot against every other, in the circle method's order so that the
  games in flight at any moment involve different bots.
- gauntlet: one bot (the first, or `gauntlet`) against each of the others.
- Swiss: `rounds` rounds; each round pairs bots with equal or close scores that have not met
  yet (first round: a seeded shuffle), computed from the finished rounds only, so a restart
  computes the same pairings. With an odd number of bots the lowest-placed one without a
  bye sits out (a bye counts as a drawn match for pairing purposes only).

Standings are Elo ratings fitted by `maag.stats.ratings.fit` over all finished games.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import html
import io
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maag.engine import registry
from maag.server.compete.strikes import DEFAULT_STRIKES, StrikePolicy, StrikeRule, histories, verdict_counts
from maag.server.storage.tournaments import GameRow, ScheduledGame

if TYPE_CHECKING:  # maag.stats.ratings loads scipy: only when standings are computed
    from maag.stats import ratings

__all__ = ["BotSpec", "TournamentSpec", "FORMATS", "parse_bot", "schedule_round", "rounds_total",
           "Standings", "standings", "rate", "to_csv", "to_json", "to_html", "match_id"]

FORMATS = ("round-robin", "gauntlet", "swiss")


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A participant: a bundled agent (`command` None, `name` is the agent) or an external
    command line."""

    name: str
    command: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "command": self.command}


def parse_bot(text: str) -> BotSpec:
    """`NAME` (a bundled agent) or `NAME=COMMAND` (an external process). ValueError if empty."""
    name, sep, command = text.partition("=")
    name = name.strip()
    if not name:
        raise ValueError(f"bad --bot {text!r}: use NAME or NAME=COMMAND")
    if sep and not command.strip():
        raise ValueError(f"bad --bot {text!r}: empty COMMAND")
    return BotSpec(name, command.strip() if sep else None)


@dataclass(frozen=True)
class TournamentSpec:
    """Everything that decides a tournament's schedule and games. Its `id` (a hash of these
    fields, unless `name` is given) names it in the database."""

    format: str
    bots: tuple[BotSpec, ...]
    games_per_pair: int = 2
    tc: str = "1s"
    seed: int | None = None
    """The schedule's base seed, for reproducible runs (anyone who knows it can compute every
    deal). None: a secret one drawn from the OS when the tournament is created and kept in the
    database (`TournamentStore.secret`), so that no bot can compute the deals."""
    game: str = field(default_factory=registry.default)
    config: tuple[tuple[str, Any], ...] = ()
    rounds: int | None = None  # Swiss only; default ceil(log2(bots)) + 1
    gauntlet: str | None = None  # gauntlet only; default the first bot
    name: str | None = None
    extra: tuple[tuple[str, Any], ...] = field(default=())  # other settings that shape games

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r} (use one of {', '.join(FORMATS)})")
        names = [b.name for b in self.bots]
        if len(names) < 2:
            raise ValueError("a tournament needs at least two bots")
        if len(set(names)) != len(names):
            raise ValueError(f"bot names must be unique: {names}")
        if self.games_per_pair < 2 or self.games_per_pair % 2:
            raise ValueError("--games-per-pair must be even (each seed is played from both seats)")
        if self.gauntlet is not None and self.gauntlet not in names:
            raise ValueError(f"gauntlet bot {self.gauntlet!r} is not among the bots")
        if self.rounds is not None and self.rounds < 1:
            raise ValueError("--rounds must be at least 1")

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bots]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format, "bots": [b.to_dict() for b in self.bots],
            "games_per_pair": self.games_per_pair, "tc": self.tc, "seed": self.seed, "game": self.game,
            "config": dict(self.config), "rounds": self.rounds, "gauntlet": self.gauntlet,
            "name": self.name, "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TournamentSpec:
        return cls(format=d["format"], bots=tuple(BotSpec(b["name"], b.get("command")) for b in d["bots"]),
                   games_per_pair=int(d["games_per_pair"]), tc=d["tc"],
                   seed=None if d.get("seed") is None else int(d["seed"]), game=d["game"],
                   config=tuple(sorted(d.get("config", {}).items())), rounds=d.get("rounds"),
                   gauntlet=d.get("gauntlet"), name=d.get("name"),
                   extra=tuple(sorted(d.get("extra", {}).items())))

    @property
    def id(self) -> str:
        if self.name:
            return self.name
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return f"{self.format}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def match_id(tid: str, key: str) -> str:
    """The `match_id` under which the referee stores a tournament game."""
    return f"tournament:{tid}:{key}"


def rounds_total(spec: TournamentSpec) -> int:
    """How many rounds the schedule has (1 for round robin and gauntlet)."""
    if spec.format != "swiss":
        return 1
    return spec.rounds if spec.rounds is not None else math.ceil(math.log2(len(spec.bots))) + 1


def _seed(base: int, *parts: Any) -> int:
    h = hashlib.sha256(json.dumps([base, *parts]).encode()).digest()
    return int.from_bytes(h[:8], "big") & (2**63 - 1)


def deals(spec: TournamentSpec) -> str:
    """"mirrored" (the two games of a pair share a deal) or "independent" (every game its own)."""
    return str(dict(spec.extra).get("deals", "mirrored"))


def _pair_games(spec: TournamentSpec, base: int, rnd: int, pairings: Sequence[tuple[str, str]],
                seq0: int) -> list[ScheduledGame]:
    """The games of `pairings` in round `rnd`: pair k of every pairing before pair k+1 of any,
    each with its seed derived from `base`.

    With mirrored deals, the two games of a deal are one with each bot moving first, but which
    two is a secret shuffle drawn from `base`: a bot cannot tell from the order of its games
    which earlier game had the same deal (in a fixed order it would be the game just before)."""
    idx = {b: i for i, b in enumerate(spec.names)}
    mirrored = deals(spec) == "mirrored"
    out: list[ScheduledGame] = []
    seq = seq0
    for k in range(spec.games_per_pair // 2):
        for a, b in pairings:
            i, j = sorted((idx[a], idx[b]))
            lo, hi = spec.names[i], spec.names[j]
            # Alternate which of the two moves first in the first game of a pair.
            first, second = (lo, hi) if k % 2 == 0 else (hi, lo)
            for s, (x, y) in enumerate(((first, second), (second, first))):
                out.append(ScheduledGame(f"r{rnd}.p{i}-{j}.k{k}.g{s}", rnd, seq, x, y,
                                         _seed(base, rnd, lo, hi, k, s)))
                seq += 1
    if not mirrored:
        return out
    rng = random.Random(_seed(base, "deals", rnd))
    slots: dict[tuple[str, str], list[int]] = {}  # (seat0, seat1) -> positions in `out`
    for n, g in enumerate(out):
        slots.setdefault((g.seat0, g.seat1), []).append(n)
    for (x, y), here in slots.items():
        if idx[x] > idx[y]:
            continue
        there = slots[(y, x)]
        # Deal k of the pairing is played at a shuffled lo-first and a shuffled hi-first position.
        dealt = [_seed(base, rnd, x, y, k) for k in range(len(here))]
        for positions in (here, there):
            order = dealt[:]
            rng.shuffle(order)
            for n, seed in zip(positions, order, strict=True):
                out[n] = dataclasses.replace(out[n], seed=seed)
    return out


def _circle(names: Sequence[str]) -> list[tuple[str, str]]:
    """All pairings of a round robin, in the circle method's rounds."""
    players: list[str | None] = list(names)
    if len(players) % 2:
        players.append(None)
    n = len(players)
    out: list[tuple[str, str]] = []
    for _ in range(n - 1):
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is not None and b is not None:
                out.append((a, b))
        players = [players[0], players[-1], *players[1:-1]]
    return out


def schedule_round(spec: TournamentSpec, rnd: int, done: Sequence[GameRow],
                   base: int | None = None) -> list[ScheduledGame]:
    """The games of round `rnd` (0-based), their seeds derived from `base` (default
    `spec.seed`; the runner passes the tournament's secret when the spec has no seed). For
    Swiss, `done` must hold every game of rounds before `rnd`, finished; other formats have
    only round 0 and ignore it."""
    if base is None:
        if spec.seed is None:
            raise ValueError("a tournament without --seed is scheduled from its stored secret")
        base = spec.seed
    if spec.format == "round-robin":
        return _pair_games(spec, base, 0, _circle(spec.names), 0)
    if spec.format == "gauntlet":
        hero = spec.gauntlet or spec.names[0]
        return _pair_games(spec, base, 0, [(hero, b) for b in spec.names if b != hero], 0)
    pairings = swiss_pairings(spec, rnd, done, base)
    seq0 = rnd * 1_000_000
    return _pair_games(spec, base, rnd, pairings, seq0)


def swiss_pairings(spec: TournamentSpec, rnd: int, done: Sequence[GameRow],
                   base: int | None = None) -> list[tuple[str, str]]:
    """Round `rnd`'s pairings from the results of earlier rounds (deterministic)."""
    names = spec.names
    order = list(names)
    seed = spec.seed if base is None else base
    if seed is None:
        raise ValueError("a tournament without --seed is scheduled from its stored secret")
    random.Random(_seed(seed, "swiss-order")).shuffle(order)
    tiebreak = {b: i for i, b in enumerate(order)}
    points = {b: 0.0 for b in names}
    met: set[frozenset[str]] = set()
    byes: dict[str, int] = {b: 0 for b in names}
    rounds_seen: dict[int, set[str]] = {}
    for row in done:
        g = row.game
        if g.round >= rnd:
            continue
        met.add(frozenset((g.seat0, g.seat1)))
        rounds_seen.setdefault(g.round, set()).update((g.seat0, g.seat1))
        s = row.score0
        if s is not None:
            points[g.seat0] += s
            points[g.seat1] += 1 - s
    for r in range(rnd):
        for b in names:
            if b not in rounds_seen.get(r, set()):
                byes[b] += 1
                points[b] += spec.games_per_pair / 2
    ranked = sorted(names, key=lambda b: (-points[b], tiebreak[b]))
    bye: str | None = None
    if len(ranked) % 2:
        bye = min(reversed(ranked), key=lambda b: byes[b])  # lowest placed among fewest byes
        ranked.remove(bye)
    pairs = _pair_up(ranked, met) or _pair_up(ranked, set())
    assert pairs is not None
    return pairs


def _pair_up(players: list[str], met: set[frozenset[str]]) -> list[tuple[str, str]] | None:
    """Pair the list top-down, each with the nearest player it has not met (backtracking)."""
    if not players:
        return []
    top, rest = players[0], players[1:]
    for i, other in enumerate(rest):
        if frozenset((top, other)) in met:
            continue
        tail = _pair_up(rest[:i] + rest[i + 1:], met)
        if tail is not None:
            return [(top, other), *tail]
    return None


# ---------------------------------------------------------------------------------------
# Standings, crosstable, exports
# ---------------------------------------------------------------------------------------


@dataclass
class Standings:
    """Everything a leaderboard shows (of a tournament or a ladder)."""

    tournament: str  # the tournament's id or the ladder's name
    format: str  # round-robin, gauntlet, swiss or ladder
    games: int  # finished games
    scheduled: int
    table: list[dict[str, Any]]  # per bot, best first: bot, games, wins, draws, losses, score, elo, elo_ci95
    crosstable: dict[str, dict[str, dict[str, float]]]  # a -> b -> {points, games}
    ratings: ratings.Ratings | None
    settings: dict[str, Any] = field(default_factory=dict)  # the specification, for exports
    description: str = ""  # one line about the event, for the HTML page

    def summary(self) -> dict[str, Any]:
        """The JSON summary of `maag tournament --json` (and `maag ladder --json`)."""
        return {
            "tournament": self.tournament, "format": self.format, "games": self.games,
            "scheduled": self.scheduled, "standings": self.table,
            "crosstable": self.crosstable,
        }


def rate(event: str, fmt: str, names: Sequence[str], outcomes: Sequence[ratings.Outcome], *,
         scheduled: int | None = None, anchor: str | None = None, settings: dict[str, Any] | None = None,
         description: str = "", verdicts: dict[str, dict[str, int]] | None = None,
         withdrawn: dict[str, str] | None = None) -> Standings:
    """Standings of `names` over `outcomes` (first, second, points of first); `verdicts`:
    per bot, how many of its games it forfeited by each verdict; `withdrawn`: bots the
    strike policy took out, with the rule."""
    wdl = {b: [0, 0, 0] for b in names}
    cross: dict[str, dict[str, dict[str, float]]] = {a: {} for a in names}
    for a, b, s in outcomes:
        for x, y, p in ((a, b, s), (b, a, 1 - s)):
            wdl[x][0 if p == 1 else 1 if p == 0.5 else 2] += 1
            c = cross[x].setdefault(y, {"points": 0.0, "games": 0})
            c["points"] += p
            c["games"] += 1
    from maag.stats.ratings import fit as fit_ratings

    fit = fit_ratings(outcomes, names=names, anchor=anchor) if outcomes else None
    table: list[dict[str, Any]] = []
    for b in names:
        w, d, lo = wdl[b]
        n = w + d + lo
        elo = fit.elo[b] if fit else 0.0
        ci = list(fit.ci95[b]) if fit else [-math.inf, math.inf]
        table.append({"bot": b, "games": n, "wins": w, "draws": d, "losses": lo, "score": w + d / 2,
                      "score_pct": (w + d / 2) / n * 100 if n else None,
                      "elo": _round(elo), "elo_ci95": [_round(ci[0]), _round(ci[1])],
                      "verdicts": dict(sorted((verdicts or {}).get(b, {}).items())),
                      "withdrawn": (withdrawn or {}).get(b)})
    table.sort(key=lambda r: (-float(r["elo"] or 0.0), -float(r["score"]), str(r["bot"])))
    for i, r in enumerate(table):
        r["rank"] = i + 1
    zero = f"{anchor} at 0" if anchor else "mean 0"
    text = (f"{description} Elo: Bradley–Terry maximum likelihood, draws as half points, {zero}; "
            "95% intervals from the likelihood.")
    total = len(outcomes) if scheduled is None else scheduled
    return Standings(event, fmt, len(outcomes), total, table, cross, fit, dict(settings or {}), text.strip())


def standings(tid: str, spec: TournamentSpec, rows: Sequence[GameRow],
              anchor: str | None = None) -> Standings:
    """Standings of a tournament over the finished games among `rows`."""
    outcomes: list[ratings.Outcome] = []
    for row in rows:
        s = row.score0
        if s is not None:
            outcomes.append((row.game.seat0, row.game.seat1, s))
    verdicts = verdict_counts((r.game.seat0, r.game.seat1, r.verdict) for r in rows if r.score0 is not None)
    withdrawn = {b: f"struck out ({rule})" for b, rule in struck(spec, rows).items()}
    desc = (f"{spec.format}, {len(outcomes)} of {len(rows)} games played, {spec.games_per_pair} games per "
            f"pairing, time control {spec.tc}.")
    return rate(tid, spec.format, spec.names, outcomes, scheduled=len(rows), anchor=anchor,
                settings=spec.to_dict(), description=desc, verdicts=verdicts, withdrawn=withdrawn)


def strike_policy(spec: TournamentSpec) -> StrikePolicy:
    """The tournament's strike policy: `strikes` in its extras, else DEFAULT_STRIKES."""
    return StrikePolicy.parse(str(dict(spec.extra).get("strikes", DEFAULT_STRIKES)))


def struck(spec: TournamentSpec, rows: Sequence[GameRow]) -> dict[str, StrikeRule]:
    """The bots the strike policy takes out, given the finished games among `rows` in
    schedule order (the same answer on every resume); once out, out (StrikePolicy.struck_ever)."""
    done = [(r.game.seat0, r.game.seat1, r.verdict) for r in rows
            if r.status == "done" and r.reason != "voided"]  # (the host voided it: storage/rulings.py)
    policy = strike_policy(spec)
    out = {}
    for bot, history in histories(done).items():
        rule = policy.struck_ever(history)
        if rule is not None:
            out[bot] = rule
    return out


def _round(x: float) -> float | None:
    return round(x, 1) if math.isfinite(x) else None


CSV_COLUMNS = ["rank", "bot", "elo", "elo_lo", "elo_hi", "games", "wins", "draws", "losses", "score",
               "score_pct"]


def to_csv(st: Standings) -> str:
    """The standings as CSV (one row per bot, best first)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in st.table:
        w.writerow([r["rank"], r["bot"], r["elo"], r["elo_ci95"][0], r["elo_ci95"][1], r["games"], r["wins"],
                    r["draws"], r["losses"], r["score"],
                    "" if r["score_pct"] is None else f"{r['score_pct']:.1f}"])
    return buf.getvalue()


def to_json(st: Standings, rows: Sequence[GameRow]) -> str:
    """Standings, crosstable, the specification and every game, as one JSON document."""
    # Seats and winners 1 and 2, as the protocol numbers them (winner null: a draw, or no
    # result yet; `status` and `reason` tell which).
    games = [{"key": r.game.key, "round": r.game.round, "seat1": r.game.seat0, "seat2": r.game.seat1,
              "seed": r.game.seed, "status": r.status, "game_id": r.game_id,
              "winner": r.winner + 1 if r.winner in (0, 1) else None, "reason": r.reason,
              "search": r.search, "verdict": r.verdict} for r in rows]
    return json.dumps({**st.summary(), "spec": st.settings, "game_list": games}, indent=1)


def forfeits_text(row: dict[str, Any]) -> str:
    """A standings row's forfeits by verdict, and its withdrawal by the strike policy."""
    kinds = ", ".join(f"{k} {n}" for k, n in (row.get("verdicts") or {}).items())
    return "; ".join(x for x in (kinds, row.get("withdrawn") or "") if x)


def to_html(st: Standings) -> str:
    """A static HTML page: the standings table and the crosstable."""
    e = html.escape
    names = [r["bot"] for r in st.table]
    head = "".join(f"<th>{e(c)}</th>" for c in ("#", "bot", "Elo", "95% interval", "games", "W", "D", "L",
                                                 "score", "forfeits"))
    body = []
    for r in st.table:
        lo, hi = r["elo_ci95"]
        ci = "–" if lo is None or hi is None else f"{lo:+.0f} … {hi:+.0f}"
        pct = "" if r["score_pct"] is None else f" ({r['score_pct']:.1f}%)"
        elo = "–" if r["elo"] is None else f"{r['elo']:+.0f}"
        body.append(f"<tr><td>{r['rank']}</td><td>{e(r['bot'])}</td><td>{elo}</td><td>{ci}</td>"
                    f"<td>{r['games']}</td><td>{r['wins']}</td><td>{r['draws']}</td><td>{r['losses']}</td>"
                    f"<td>{r['score']:g}{pct}</td><td>{e(forfeits_text(r))}</td></tr>")
    xhead = "".join(f"<th>{e(b)}</th>" for b in names)
    xrows = []
    for a in names:
        cells = []
        for b in names:
            c = st.crosstable[a].get(b)
            cells.append("<td class=self></td>" if a == b else
                         f"<td>{c['points']:g}/{c['games']:g}</td>" if c else "<td></td>")
        xrows.append(f"<tr><th>{e(a)}</th>{''.join(cells)}</tr>")
    title = e(f"maag {'ladder' if st.format == 'ladder' else 'tournament'} {st.tournament}")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin-bottom: 2em; }}
th, td {{ border: 1px solid #bbb; padding: .3em .6em; text-align: right; }}
td:nth-child(2), th:first-child {{ text-align: left; }}
td.self {{ background: #ddd; }}
</style></head><body>
<h1>{title}</h1>
<p>{e(st.description)}</p>
<h2>Standings</h2>
<table><tr>{head}</tr>
{chr(10).join(body)}
</table>
<h2>Crosstable</h2>
<p>Points of the row's bot against the column's bot / games.</p>
<table><tr><th></th>{xhead}</tr>
{chr(10).join(xrows)}
</table>
</body></html>
"""
