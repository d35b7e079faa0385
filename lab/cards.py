"""The card-game thesis's tables (spec/cards.md §9) in shape: the random players against UCT
with 40 simulations (§9.1), UCT against the random action player from 1 to 10,000
simulations (§9.2), UCB against UCT at equal simulation counts with and without the
post-Monte-Carlo completions (§9.3), and the sweeps of c and of the number of bandits
(§9.4).

Games are the thesis's setting: random decks (spec §4.4), hidden hands and random draws,
agents given their seat's observation and planning one whole move per turn; a move that
stops being legal when its turn comes (a draw or a random target came out otherwise) is
finished by random actions (§8.2). Budgets are simulation counts, so results do not depend
on the machine's speed. Seats alternate and each deal is played from both seats; ties are
left out of the win rates, as in the thesis.

Every finished game is appended to a data file (JSON lines), so an interrupted run goes on
where it stopped, and more games can be added to a point later; the report reads the file."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maag.stats import wilson

from . import datafile
from .arena import ArenaConfig, GameResult, run_arena

__all__ = ["Point", "TABLES", "points", "run_point", "load", "Summary", "summarise", "markdown", "plot"]

GAME_CONFIG = {"deck1": "random", "deck2": "random"}  # the thesis's random decks (spec §4.4)

C = "1.4142"  # the thesis's default exploration constant (spec §8.7)
PLAYOUT = "rollout=rap,rollout_turns=1000"  # random actions to the end of the game (§8.6)


def uct(c: str = C, post: str = "none") -> str:
    """UCT as the thesis ran it (spec §8.4), every setting spelled out."""
    return f"uct:c={c},post={post},{PLAYOUT}"


def ucb(c: str = C, bandits: int = 10000) -> str:
    """The thesis's flat UCB over generated moves (§8.3), max-wins final selection."""
    return f"ucb:moves=dfs,max_bandits={bandits},final=max-wins,c={c},{PLAYOUT}"


RANDOM_PLAYERS = {"RAP": "rap", "RMP": "rmp", "RMP (pruning)": "rmp:prune=true", "RMPmax": "rmpmax"}

# The thesis's figures (spec §9), by table and point label.
THESIS_91 = {"RAP": (3.53, 0.432), "RMP": (4.14, 0.585), "RMP (pruning)": (3.81, 0.508),
             "RMPmax": (4.38, 0.688)}
SIMS_92 = [1, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
THESIS_92 = {1: (18, 1.89, 0.016), 5: (56, 2.37, 0.140), 10: (100, 2.50, 0.195), 20: (179, 2.64, 0.323),
             50: (335, 2.84, 0.533), 100: (564, 2.95, 0.638), 200: (973, 3.03, 0.748),
             500: (1922, 3.12, 0.867), 1000: (3145, 3.17, 0.919), 2000: (4874, 3.19, 0.949),
             5000: (8071, 3.21, 0.970), 10000: (9263, 3.19, 0.983)}
SIMS_93 = [1, 8, 32, 128, 512, 2048, 8192, 32768, 65536]
POSTS_93 = ["none", "rap", "rmpmax"]
THESIS_93 = {1: (0.004, 0.322, 0.462), 8: (0.048, 0.337, 0.435), 32: (0.146, 0.418, 0.479),
             128: (0.316, 0.512, 0.538), 512: (0.503, 0.591, 0.603), 2048: (0.587, 0.618, 0.614),
             8192: (0.627, 0.614, 0.609), 32768: (0.545, 0.558, 0.553), 65536: (0.501, 0.494, 0.476)}
CS_94 = ["0.01", "0.1", "10"]
SIMS_94 = [32, 512]
BANDITS_94 = [100, 1000, 100000]
SIMS_BANDITS = [128, 2048]


@dataclass(frozen=True)
class Point:
    """One match-up of a table: agent `a` (the one reported) against `b`."""

    table: str        # "9.1", "9.2", "9.3", "9.4c" or "9.4b"
    series: str       # a curve of the table ("" when it has one)
    label: str        # the row
    a: str
    b: str
    a_iter: int | None  # simulations per move (None: the agent has no budget)
    b_iter: int | None

    @property
    def key(self) -> str:
        return f"{self.table}|{self.series}|{self.label}"

    @property
    def sims(self) -> int | None:
        return int(self.label) if self.label.isdigit() else None


def _table_91() -> list[Point]:
    return [Point("9.1", "", name, spec, uct(), None, 40) for name, spec in RANDOM_PLAYERS.items()]


def _table_92(sims: Sequence[int]) -> list[Point]:
    return [Point("9.2", "", str(n), uct(), "rap", n, None) for n in sims]


def _table_93(sims: Sequence[int]) -> list[Point]:
    return [Point("9.3", post, str(n), uct(post=post), ucb(), n, n) for post in POSTS_93 for n in sims]


def _table_94c() -> list[Point]:
    out = []
    for name, make in (("uct", uct), ("ucb", ucb)):
        for c in CS_94:
            for n in SIMS_94:
                out.append(Point("9.4c", f"{name} c={c}", str(n), make(c), make(C), n, n))
    return out


def _table_94b() -> list[Point]:
    return [Point("9.4b", f"{m} bandits", str(n), ucb(bandits=m), ucb(), n, n)
            for m in BANDITS_94 for n in SIMS_BANDITS]


TABLES: dict[str, str] = {
    "9.1": "the random players against UCT with 40 simulations",
    "9.2": "UCT (c = 1.414, no completion) against RAP by simulations",
    "9.3": "UCT against UCB at equal simulations, with each completion",
    "9.4c": "the exploration constant: each c against c = 1.414, same agent and budget",
    "9.4b": "UCB's number of bandits against 10,000 bandits",
}


def points(tables: Iterable[str], sims: Sequence[int] | None = None) -> list[Point]:
    """The points of `tables` (names of TABLES); `sims` replaces the simulation counts of 9.2
    and 9.3 (their points at other counts are left out)."""
    out: list[Point] = []
    for t in tables:
        if t not in TABLES:
            raise ValueError(f"unknown table {t!r}; known: {', '.join(TABLES)}")
        if t == "9.1":
            out += _table_91()
        elif t == "9.2":
            out += _table_92(sims or SIMS_92)
        elif t == "9.3":
            out += _table_93(sims or SIMS_93)
        elif t == "9.4c":
            out += _table_94c()
        else:
            out += _table_94b()
    return out


# ---- running and storing ---------------------------------------------------------------------

def _record(p: Point, r: GameResult) -> dict[str, Any]:
    return {"key": p.key, "a": p.a, "b": p.b, "a_iter": p.a_iter, "b_iter": p.b_iter, "index": r.index,
            "seed": r.seed, "a_seat": r.a_seat, "winner": None if r.winner is None else "ab"[r.winner],
            "turns": r.turns, "seconds": round(r.seconds, 3),
            "moves": [round(r.moves.get(0, 0.0), 3), round(r.moves.get(1, 0.0), 3)],
            "nodes": [round(r.nodes.get(0, 0.0), 1), round(r.nodes.get(1, 0.0), 1)],
            "iterations": [round(r.iterations.get(0, 0.0), 1), round(r.iterations.get(1, 0.0), 1)]}


def _result(d: dict[str, Any]) -> GameResult:
    w = d["winner"]
    return GameResult(d["index"], 0, 1, d["a_seat"], d["seed"], None if w is None else "ab".index(w),
                      d["turns"], d["seconds"], moves=dict(enumerate(d["moves"])),
                      nodes=dict(enumerate(d["nodes"])),
                      iterations=dict(enumerate(d["iterations"])))


def load(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """The data file's games by point key (a missing file: none; a torn line is skipped)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for d in datafile.read(path):
        out.setdefault(d["key"], []).append(d)
    return out


def run_point(p: Point, games: int, data: str | Path, *, jobs: int = 1, seed: int = 1,
              on_game: Callable[[int, int], None] | None = None) -> None:
    """Play point `p` up to `games` games (seats alternating), appending each finished game
    to `data`; games already in `data` (same point, same schedule) are kept."""
    have = [d for d in load(data).get(p.key, []) if d["a"] == p.a and d["b"] == p.b]
    cfg = ArenaConfig(turn_ms=None, iterations=None, game="cards", game_config=dict(GAME_CONFIG),
                      view="observation", on_illegal="rap",
                      agent_iterations={s: n for s, n in ((p.a, p.a_iter), (p.b, p.b_iter)) if n})
    with datafile.append(data) as f:
        def record(r: GameResult, done: int, total: int) -> None:
            datafile.write(f, _record(p, r))
            if on_game:
                on_game(done, total)

        run_arena([p.a, p.b], games, cfg, jobs=jobs, seed=seed, on_game=record,
                  done=[_result(d) for d in have])


# ---- summaries -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """A point's results: A's wins and losses (ties left out), its win rate with a 95%
    interval, and both agents' mean move length and tree size per turn."""

    games: int
    wins: int
    losses: int
    moves: tuple[float, float]
    nodes: tuple[float, float]

    @property
    def rate(self) -> float:
        n = self.wins + self.losses
        return self.wins / n if n else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.wins + self.losses)


def summarise(games: Sequence[dict[str, Any]]) -> Summary:
    wins = sum(g["winner"] == "a" for g in games)
    losses = sum(g["winner"] == "b" for g in games)

    def mean(field: str, i: int) -> float:
        vals = [g[field][i] for g in games]
        return sum(vals) / len(vals) if vals else math.nan

    return Summary(len(games), wins, losses, (mean("moves", 0), mean("moves", 1)),
                   (mean("nodes", 0), mean("nodes", 1)))


def _rate(s: Summary) -> str:
    if s.wins + s.losses == 0:
        return "—"
    lo, hi = s.ci
    return f"{s.rate:.3f} [{lo:.2f}, {hi:.2f}]"


def _agree(s: Summary, ref: float) -> str:
    """Whether the thesis's figure lies in our 95% interval."""
    if s.wins + s.losses == 0:
        return ""
    lo, hi = s.ci
    return "yes" if lo <= ref <= hi else ("above" if ref > hi else "below")


def markdown(data: dict[str, list[dict[str, Any]]]) -> str:
    """The tables of every point with data, each beside the thesis's figures."""
    out: list[str] = []
    got = {k: summarise(v) for k, v in data.items() if v}

    rows = [(n, got[p.key]) for n, p in zip(RANDOM_PLAYERS, _table_91(), strict=True) if p.key in got]
    if rows:
        out += ["### §9.1 The random players against UCT with 40 simulations", "",
                "| player | games | move length | thesis | win rate vs UCT-40 [95% CI] | thesis | "
                "thesis in CI |",
                "|---|---|---|---|---|---|---|"]
        for name, s in rows:
            tl, tw = THESIS_91[name]
            out.append(f"| {name} | {s.games} | {s.moves[0]:.2f} | {tl:.2f} | {_rate(s)} | {tw:.3f} | "
                       f"{_agree(s, tw)} |")
        out.append("")

    rows92 = [(p, got[p.key]) for p in _table_92(SIMS_92 + [n for n in _extra(data, "9.2")]) if p.key in got]
    if rows92:
        out += ["### §9.2 UCT (c = 1.414, no completion) against RAP", "",
                "| simulations | games | tree size | thesis | move length | thesis | win rate [95% CI] | "
                "thesis | thesis in CI |", "|---|---|---|---|---|---|---|---|---|"]
        for p, s in sorted(rows92, key=lambda x: x[0].sims or 0):
            if (p.sims or 0) in THESIS_92:
                tt, tl, tw = THESIS_92[p.sims or 0]
                ref = f"{tt:,} | {s.moves[0]:.2f} | {tl:.2f} | {_rate(s)} | {tw:.3f} | {_agree(s, tw)}"
            else:
                ref = f"— | {s.moves[0]:.2f} | — | {_rate(s)} | — | "
            out.append(f"| {p.label} | {s.games} | {s.nodes[0]:,.0f} | {ref} |")
        out.append("")

    sims93 = sorted({p.sims or 0 for p in _table_93(SIMS_93 + _extra(data, "9.3")) if p.key in got})
    if sims93:
        out += ["### §9.3 UCT's win rate against UCB at equal simulations (c = 1.414)", "",
                "Each cell: UCT's win rate [95% CI] over the games played (n), then the thesis's figure. "
                "Move length: UCT / UCB.", "",
                "| simulations | " + " | ".join(f"{post} completion" for post in POSTS_93) + " |",
                "|---|" + "---|" * len(POSTS_93)]
        for n in sims93:
            cells = []
            for i, post in enumerate(POSTS_93):
                cell = got.get(f"9.3|{post}|{n}")
                ref = f"{THESIS_93[n][i]:.3f}" if n in THESIS_93 else "—"
                cells.append("—" if cell is None else
                             f"{_rate(cell)} (n={cell.games})<br>thesis {ref}<br>length "
                             f"{cell.moves[0]:.2f} / {cell.moves[1]:.2f}")
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        out.append("")

    for table, title, col in (("9.4c", "§9.4 The exploration constant: each c against c = 1.414",
                               "variant"),
                              ("9.4b", "§9.4 UCB's bandits: each count against 10,000 bandits", "bandits")):
        pts = [p for p in (_table_94c() if table == "9.4c" else _table_94b()) if p.key in got]
        if not pts:
            continue
        sims = sorted({p.sims or 0 for p in pts})
        out += [f"### {title}", "", f"| {col} | " + " | ".join(f"{n} simulations" for n in sims) + " |",
                "|---|" + "---|" * len(sims)]
        for series in dict.fromkeys(p.series for p in pts):
            cells = []
            for n in sims:
                cell = got.get(f"{table}|{series}|{n}")
                cells.append("—" if cell is None else f"{_rate(cell)} (n={cell.games})")
            out.append(f"| {series} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _extra(data: dict[str, list[dict[str, Any]]], table: str) -> list[int]:
    """Simulation counts of a table's points in the data beyond the thesis's own."""
    own = set(SIMS_92 if table == "9.2" else SIMS_93)
    out = set()
    for key in data:
        t, _, label = key.split("|")
        if t == table and label.isdigit() and int(label) not in own:
            out.add(int(label))
    return sorted(out)


def plot(data: dict[str, list[dict[str, Any]]], folder: str | Path) -> list[Path]:
    """The §9.2 and §9.3 curves against the thesis's, as PNGs in `folder`; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(fig: Any, name: str) -> Path:
        fig.tight_layout()
        path = folder / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path

    got = {k: summarise(v) for k, v in data.items() if v}

    pts = sorted((p for p in _table_92(SIMS_92 + _extra(data, "9.2")) if p.key in got),
                 key=lambda p: p.sims or 0)
    if pts:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
        xs = [p.sims for p in pts]
        ss = [got[p.key] for p in pts]
        ax.errorbar(xs, [s.rate for s in ss], yerr=_err(ss), fmt="o-", capsize=3, label="maag")
        ax.plot(list(THESIS_92), [v[2] for v in THESIS_92.values()], "k--", label="thesis (Table 16)")
        ax.set_xscale("log")
        ax.set_xlabel("UCT simulations per move")
        ax.set_ylabel("UCT win rate against RAP (ties left out)")
        ax.set_ylim(0, 1)
        ax.legend()
        ax2.plot(xs, [s.moves[0] for s in ss], "o-", label="move length, maag")
        ax2.plot(list(THESIS_92), [v[1] for v in THESIS_92.values()], "k--", label="move length, thesis")
        ax2.set_xscale("log")
        ax2.set_xlabel("UCT simulations per move")
        ax2.set_ylabel("actions per move (end_turn included)")
        ax2.legend()
        fig.suptitle("cards §9.2: UCT (c = 1.414, no completion) against the random action player")
        written.append(save(fig, "results-cards-uct-vs-rap.png"))

    all93 = _table_93(SIMS_93 + _extra(data, "9.3"))
    if any(p.key in got for p in all93):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for i, post in enumerate(POSTS_93):
            pts = sorted((p for p in all93 if p.series == post and p.key in got), key=lambda p: p.sims or 0)
            if not pts:
                continue
            ss = [got[p.key] for p in pts]
            line = ax.errorbar([p.sims or 0 for p in pts], [s.rate for s in ss], yerr=_err(ss), fmt="o-",
                               capsize=3, label=f"{post} completion")
            ax.plot(list(THESIS_93), [v[i] for v in THESIS_93.values()], "--", color=line[0].get_color(),
                    alpha=0.6, label=f"{post}, thesis")
        ax.axhline(0.5, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("simulations per move (both agents)")
        ax.set_ylabel("UCT win rate against UCB (ties left out)")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=8, ncol=2)
        ax.set_title("cards §9.3: UCT against UCB at equal simulations (c = 1.414)")
        written.append(save(fig, "results-cards-ucb-vs-uct.png"))
    return written


def _err(ss: Sequence[Summary]) -> list[list[float]]:
    lo = [s.rate - s.ci[0] if s.wins + s.losses else 0.0 for s in ss]
    hi = [s.ci[1] - s.rate if s.wins + s.losses else 0.0 for s in ss]
    return [lo, hi]
