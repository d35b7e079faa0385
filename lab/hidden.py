"""The hidden-information experiment (`maag experiment hidden`): in-process games of the real
stochastic game (random draws, hidden hands) between honest agents, which are given only
their seat's `Observation`, and cheating twins, which search the true state
(maag.bots.cheating). Cheating agents play here, in `maag arena --view full` and, through
`maag match`, only as twin_bot.py's bot process; the referee cannot run one.

An entrant is a maag.bots spec ("pimc:inner=mcts,k=8", "ismcts", "mcts") or the same with
the prefix "cheat:" for its cheating twin ("cheat:ismcts"), or "peek:" for its peeking twin
(every hand and secret, not the decks' order: "peek:mcts"; games with ordered decks only).
A pairing plays `games` games (rounded up to even): seats alternate and game 2k and 2k+1
share a seed (the deal and the referee's draw RNG), seats swapped. An illegal plan loses the
game (a forfeit, counted).

The score of A against B is (wins + draws / 2) / games with a 95% interval (normal
approximation over per-game scores, Wilson when all games ended alike: maag match's
statistics), and `p_value` is the two-sided exact binomial test of "A and B are equally
strong" on the decisive games."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.bots import Agent, parse_agent
from maag.bots.cheating import CheatingAgent, PeekingAgent, shuffle_decks
from maag.bots.runner import CHANCE_SHARE
from maag.engine import Game, IllegalActionError, Observation
from maag.stats import pairwise

from . import datafile
from .arena import in_processes, play_step

__all__ = ["CHEAT", "PEEK", "Entrant", "HiddenConfig", "GameRecord", "PairResult", "PRESETS", "make_entrant",
           "deal_seeds", "play_game", "preset_pairs", "record_line", "recorded", "run_pairs"]

CHEAT = "cheat:"
PEEK = "peek:"


@dataclass(frozen=True)
class HiddenConfig:
    """How the games are played.

    turn_ms: time budget of every turn in milliseconds (None: iterations only).
    iterations: iteration budget of every turn in the kernel's unit (None: time only).
    game: the registered game; game_config: its options (the real game by default: heroes
    on map a with random draws, the other games on their defaults).
    """

    turn_ms: float | None = 1000.0
    iterations: int | None = None
    game: str = "heroes"
    game_config: dict[str, Any] = field(default_factory=lambda: {"map": "a", "draws": "random"})
    agent_turn_ms: dict[str, float | None] = field(default_factory=dict)
    """Time budgets of particular entrants (by spec; None: no time limit), overriding `turn_ms`."""
    agent_iterations: dict[str, int | None] = field(default_factory=dict)
    """Iteration budgets of particular entrants (by spec), overriding `iterations`."""


class Entrant:
    """An agent in the experiment: honest (plans from its Observation), a cheating twin (the
    true state) or a peeking twin (the true state with the decks shuffled again)."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        prefix = next((x for x in (CHEAT, PEEK) if spec.startswith(x)), "")
        self.cheats = bool(prefix)
        agent: Agent = parse_agent(spec[len(prefix):])
        self.agent = agent
        self.twin = (CheatingAgent(agent) if prefix == CHEAT else PeekingAgent(agent)) if prefix else None

    def plan(self, state: Any, seat: int, turn_ms: float | None, iterations: int | None,
             seed: int) -> list[Any]:
        if self.twin is not None:
            return self.twin.plan(state, budget_ms=turn_ms, iterations=iterations, seed=seed)
        return self.agent.plan(Observation.of(state, seat), budget_ms=turn_ms, iterations=iterations,
                               seed=seed)


def make_entrant(spec: str) -> Entrant:
    """An entrant from its spec; AgentError for an unknown agent or setting."""
    return Entrant(spec)


@dataclass
class GameRecord:
    pair: int
    index: int
    a_seat: int          # 0: entrant A is player 1
    seed: int
    winner: int | None   # 0: A won, 1: B won, None: a draw
    turns: int
    seconds: float
    forfeit: bool = False
    iterations: tuple[float, float] = (0.0, 0.0)  # mean kernel iterations per turn of A, B


def play_game(pair: int, index: int, specs: tuple[str, str], a_seat: int, seed: int,
              cfg: HiddenConfig) -> GameRecord:
    """Play one game of the real game to the end (the state's RNG, seeded from `seed`, is
    the referee's: no agent sees it). Turns are played as the bot runner plays them through
    the referee: in a game with chance inside a turn (cards) the agent plans again after
    each action, each plan getting 1/CHANCE_SHARE of what is left of the turn's time."""
    game = Game(cfg.game, cfg.game_config)
    state = game.new_state(seed)
    entrants = [make_entrant(specs[0]), make_entrant(specs[1])]
    by_seat = [0, 1] if a_seat == 0 else [1, 0]  # seat -> entrant index
    rng = random.Random(seed ^ 0x5EED)
    # plan again after each action, as the bot runner does (in a game with chance inside a
    # turn, or for an agent that asks to: `reuse`)
    for e in entrants:
        e.agent.for_game(cfg.game)  # `best` resolves its agent, which may be stepwise
    stepwise = [game.spec.chance_within_turn or e.agent.stepwise for e in entrants]
    iters: list[list[int]] = [[], []]
    t0 = time.monotonic()
    turns = 0
    while not state.is_terminal:
        p = state.current_player
        who = by_seat[p]
        turns += 1
        spent = 0
        start = time.monotonic()
        while True:  # one plan, or in a game with chance inside a turn one plan per action
            budget = cfg.agent_turn_ms.get(specs[who], cfg.turn_ms)
            if stepwise[who] and budget is not None:  # as the bot runner shares a turn's clock
                budget = max(1.0, budget - (time.monotonic() - start) * 1000) / CHANCE_SHARE
            plan = entrants[who].plan(state, p, budget, cfg.agent_iterations.get(specs[who], cfg.iterations),
                                      rng.getrandbits(62))
            last = entrants[who].agent.last
            spent += last.stats.iterations if last is not None else 0
            try:
                if play_step(state, plan, stepwise[who]):
                    break
            except IllegalActionError:
                return GameRecord(pair, index, a_seat, seed, 1 - who, turns, time.monotonic() - t0,
                                  forfeit=True)
        iters[who].append(spent)
    w = state.winner
    winner = None if w is None or w < 0 else by_seat[w]
    return GameRecord(pair, index, a_seat, seed, winner, turns, time.monotonic() - t0,
                      iterations=(statistics.fmean(iters[0]) if iters[0] else 0.0,
                                  statistics.fmean(iters[1]) if iters[1] else 0.0))


@dataclass
class PairResult:
    a: str
    b: str
    games: list[GameRecord]

    def tally(self) -> tuple[int, int, int]:
        w = sum(g.winner == 0 for g in self.games)
        lo = sum(g.winner == 1 for g in self.games)
        return w, len(self.games) - w - lo, lo

    def p_value(self) -> float:
        """Two-sided exact binomial test of equal strength on the decisive games."""
        from scipy.stats import binomtest

        w, _, lo = self.tally()
        return 1.0 if w + lo == 0 else float(binomtest(w, w + lo, 0.5).pvalue)

    def as_dict(self) -> dict[str, Any]:
        w, d, lo = self.tally()
        st = pairwise(w, d, lo).as_dict()
        it_a = [g.iterations[0] for g in self.games if g.iterations[0] > 0]
        it_b = [g.iterations[1] for g in self.games if g.iterations[1] > 0]
        return {"a": self.a, "b": self.b, **st, "p_value": round(self.p_value(), 5),
                "forfeits": sum(g.forfeit for g in self.games),
                "mean_turns": round(statistics.fmean(g.turns for g in self.games), 1) if self.games else 0,
                "mean_iterations": [round(statistics.fmean(it_a), 1) if it_a else 0,
                                    round(statistics.fmean(it_b), 1) if it_b else 0]}


def _play(args: tuple[int, int, tuple[str, str], int, int, HiddenConfig]) -> GameRecord:
    return play_game(*args)


def deal_seeds(seed: int, deals: int) -> list[int]:
    """The seeds of the first `deals` deals: the same for every pairing (so pairings are
    compared on the same deals), and a longer run starts with a shorter one's."""
    rng = random.Random(seed)
    return [rng.getrandbits(62) for _ in range(deals)]


def _setting(cfg: HiddenConfig) -> dict[str, Any]:
    """What a recorded game must share with a run to count in it."""
    return {"game": cfg.game, "game_config": cfg.game_config, "turn_ms": cfg.turn_ms,
            "iterations": cfg.iterations}


def record_line(r: GameRecord, pair: tuple[str, str], cfg: HiddenConfig) -> dict[str, Any]:
    """A game as a line of the data file."""
    return {"a": pair[0], "b": pair[1], **_setting(cfg), "index": r.index, "seed": r.seed,
            "a_seat": r.a_seat, "winner": None if r.winner is None else "ab"[r.winner], "turns": r.turns,
            "seconds": round(r.seconds, 3), "forfeit": r.forfeit,
            "mean_iterations": [round(x, 1) for x in r.iterations]}


def recorded(data: str | Path, pairs: Sequence[tuple[str, str]], cfg: HiddenConfig) -> list[GameRecord]:
    """The games of `data` that belong to this run: one of `pairs`, played with `cfg`'s game,
    options and budgets (the first record of a game that appears twice)."""
    index = {p: i for i, p in enumerate(pairs)}
    want = _setting(cfg)
    out: dict[tuple[int, int, int], GameRecord] = {}
    for d in datafile.read(data):
        i = index.get((d.get("a"), d.get("b")))  # type: ignore[arg-type]
        if i is None or any(d.get(k) != v for k, v in want.items()):
            continue
        w = d["winner"]
        its = d["mean_iterations"]
        r = GameRecord(i, d["index"], d["a_seat"], d["seed"], None if w is None else "ab".index(w),
                       d["turns"], d["seconds"], forfeit=d["forfeit"], iterations=(its[0], its[1]))
        out.setdefault((i, r.index, r.seed), r)
    return list(out.values())


def run_pairs(pairs: Sequence[tuple[str, str]], games: int, cfg: HiddenConfig, *, jobs: int = 1,
              seed: int = 1, data: str | Path | None = None,
              on_game: Callable[[GameRecord, int, int], None] | None = None) -> list[PairResult]:
    """Play every pairing `games` games (rounded up to even); `on_game(record, done, total)`
    after each game. Games run `jobs` at a time, one process each.

    data: a JSON-lines file (maag.lab.datafile) where every finished game is
    appended; the games it holds already for this run's pairings and setting are not played
    again but counted, so an interrupted run goes on with the same command and a larger
    `games` adds games."""
    for a, b in pairs:  # fail early on a bad spec, in this process
        for spec in (a, b):
            make_entrant(spec)
            if spec.startswith(PEEK):  # a game without ordered decks: refused before any game
                shuffle_decks(Game(cfg.game, cfg.game_config).new_state(1), random.Random(0))
    per_pair = games + games % 2
    results = [PairResult(a, b, []) for a, b in pairs]
    have = set()
    for r in recorded(data, pairs, cfg) if data is not None else []:
        results[r.pair].games.append(r)
        have.add((r.pair, r.index, r.seed))
    tasks = []
    for k, s in enumerate(deal_seeds(seed, per_pair // 2)):
        for i, (a, b) in enumerate(pairs):  # interleaved: a partial run covers every pairing
            for seat in (0, 1):
                if (i, 2 * k + seat, s) not in have:
                    tasks.append((i, 2 * k + seat, (a, b), seat, s, cfg))
    sink = datafile.append(data) if data is not None and tasks else None
    done = 0

    def collect(it: Iterator[GameRecord]) -> None:
        nonlocal done
        for r in it:
            results[r.pair].games.append(r)
            if sink is not None:
                datafile.write(sink, record_line(r, pairs[r.pair], cfg))
            done += 1
            if on_game:
                on_game(r, done, len(tasks))

    try:
        collect(in_processes(_play, tasks, jobs))
    finally:
        if sink is not None:
            sink.close()
    for pr in results:
        pr.games.sort(key=lambda g: (g.index, g.seed))
    return results


PRESETS = ("cost", "baseline", "k")


def _pimc(best: str, k: int) -> str:
    name, _, opts = best.partition(":")
    return f"pimc:inner={name},k={k}" + (f",{opts}" if opts else "")


def _ismcts(best: str) -> str:
    from maag.bots import AGENTS

    known = {p.name for p in AGENTS["ismcts"].params}
    opts = [kv for kv in best.partition(":")[2].split(",") if kv and kv.split("=", 1)[0] in known]
    return "ismcts" + (":" + ",".join(opts) if opts else "")


def preset_pairs(name: str, best: str, k: int = 8,
                 ks: Sequence[int] = (2, 4, 16, 32)) -> list[tuple[str, str]]:
    """The pairings of a named experiment, built on the perfect-information agent `best`
    ("NAME" or "NAME:key=value,..."):

    cost: each honest agent against its cheating twin: best, pimc over best with `k`
        determinizations, and ismcts with best's MCTS settings;
    baseline: pimc (k) and ismcts against best on one random determinization;
    k: pimc over best with each k in `ks` against best on one random determinization.
    """
    if name == "cost":
        return [(best, CHEAT + best), (_pimc(best, k), CHEAT + _pimc(best, k)),
                (_ismcts(best), CHEAT + _ismcts(best))]
    if name == "baseline":
        return [(_pimc(best, k), best), (_ismcts(best), best)]
    if name == "k":
        return [(_pimc(best, kk), best) for kk in ks]
    raise ValueError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")


