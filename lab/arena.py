"""An in-process round robin among bundled agents (`maag arena`): no referee, no sockets;
each game runs the C engine and the agents' C searches in one worker process, and the
games are spread over a process pool.

Every pair plays `games` games, half with each agent as player 1; game 2k and 2k+1 of a
pair use the same deal seed with the seats swapped. The score of A against B is (wins +
draws / 2) / games, with a 95% Wilson score interval (draws counted as half a win)."""

from __future__ import annotations

import multiprocessing
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from maag.bots import Agent, parse_agent
from maag.engine import Action, Game, IllegalActionError, Observation, State
from maag.stats import wilson

__all__ = ["ArenaConfig", "GameResult", "ArenaResult", "schedule", "play_game", "run_arena", "apply_plan",
           "play_step", "end_turn"]



@dataclass(frozen=True)
class ArenaConfig:
    """How games are played.

    turn_ms: time budget of each agent's turn in milliseconds (None: iterations only).
    iterations: iteration budget of each turn in the kernel's unit (None: time only).
    game: game name; game_config: its options (heroes: map, draws, ...).
    view: "full" (agents see the whole state) or "observation" (what their seat may see).
    """

    turn_ms: float | None = 500.0
    iterations: int | None = None
    game: str = "heroes"
    game_config: dict[str, Any] = field(default_factory=lambda: {"map": "a", "draws": "seeded"})
    view: str = "full"
    agent_iterations: dict[str, int] = field(default_factory=dict)
    """Iteration budgets of particular entrants (by spec), overriding `iterations`."""
    agent_turn_ms: dict[str, float | None] = field(default_factory=dict)
    """Time budgets of particular entrants (by spec; None: no time limit), overriding `turn_ms`."""
    on_illegal: str = "forfeit"
    """A plan step that is illegal when its turn comes (a draw or a random target came out
    otherwise than the agent planned): "forfeit" (the agent loses) or "rap" (the card-game
    thesis: the rest of the turn is random actions, end_turn among them; spec/cards.md §8.2)."""


@dataclass(frozen=True)
class GameTask:
    index: int
    a: int          # agent index of the first agent of the pair
    b: int
    a_seat: int     # 0: agent a is player 1
    seed: int


@dataclass
class GameResult:
    index: int
    a: int
    b: int
    a_seat: int
    seed: int
    winner: int | None  # agent index of the winner, None for a draw
    turns: int
    seconds: float
    forfeit: bool = False  # the loser's plan held an illegal action
    iterations: dict[int, float] = field(default_factory=dict)  # agent -> mean per turn
    turn_ms: dict[int, float] = field(default_factory=dict)  # agent -> mean search time per turn
    moves: dict[int, float] = field(default_factory=dict)  # agent -> mean plan length (end_turn included)
    nodes: dict[int, float] = field(default_factory=dict)  # agent -> mean tree size (kernel's nodes)


def schedule(n_agents: int, games: int, seed: int) -> list[GameTask]:
    """Round robin: every pair plays `games` games (rounded up to even), seats alternating,
    each deal seed played from both seats."""
    rng = random.Random(seed)
    tasks: list[GameTask] = []
    per_pair = games + games % 2
    for a in range(n_agents):
        for b in range(a + 1, n_agents):
            for _ in range(per_pair // 2):
                s = rng.getrandbits(62)
                for seat in (0, 1):
                    tasks.append(GameTask(len(tasks), a, b, seat, s))
    return tasks


def play_game(task: GameTask, specs: Sequence[str], cfg: ArenaConfig) -> GameResult:
    """Play one game to the end; an agent whose plan holds an illegal action loses."""
    game = Game(cfg.game, cfg.game_config)
    state = game.new_state(task.seed)
    seat_agent = [task.a, task.b] if task.a_seat == 0 else [task.b, task.a]
    agents: list[Agent] = [parse_agent(specs[i]) for i in seat_agent]
    rng = random.Random(task.seed ^ 0x5EED)
    iters: dict[int, list[int]] = {task.a: [], task.b: []}
    times: dict[int, list[float]] = {task.a: [], task.b: []}
    lengths: dict[int, list[int]] = {task.a: [], task.b: []}
    nodes: dict[int, list[int]] = {task.a: [], task.b: []}
    t0 = time.monotonic()
    turns = 0
    while not state.is_terminal:
        p = state.current_player
        iterations = cfg.agent_iterations.get(specs[seat_agent[p]], cfg.iterations)
        turn_ms = cfg.agent_turn_ms.get(specs[seat_agent[p]], cfg.turn_ms)
        if cfg.view == "full":  # the research setting: the agent searches the true state
            from maag.bots.cheating import CheatingAgent  # experiments only: loaded on demand

            plan = CheatingAgent(agents[p]).plan(state, budget_ms=turn_ms, iterations=iterations,
                                                 seed=rng.getrandbits(63))
        else:
            plan = agents[p].plan(Observation.of(state, p), budget_ms=turn_ms, iterations=iterations,
                                  seed=rng.getrandbits(63))
        last = agents[p].last
        if last is not None:
            iters[seat_agent[p]].append(last.stats.iterations)
            times[seat_agent[p]].append(last.stats.elapsed_ms)
            nodes[seat_agent[p]].append(last.stats.nodes)
        lengths[seat_agent[p]].append(len(plan))
        turns += 1
        try:
            finished = apply_plan(state, plan)
        except IllegalActionError:
            if cfg.on_illegal != "rap":
                return GameResult(task.index, task.a, task.b, task.a_seat, task.seed, seat_agent[1 - p],
                                  turns, time.monotonic() - t0, forfeit=True)
            _finish_randomly(state, p, rng)
            continue
        if not finished:  # a plan that did not end its turn
            end_turn(state)
    w = state.winner
    winner = None if w is None or w < 0 else seat_agent[w]

    def mean(d: dict[int, list[int]] | dict[int, list[float]]) -> dict[int, float]:
        return {k: statistics.fmean(v) if v else 0.0 for k, v in d.items()}

    return GameResult(task.index, task.a, task.b, task.a_seat, task.seed, winner, turns,
                      time.monotonic() - t0, iterations=mean(iters), turn_ms=mean(times), moves=mean(lengths),
                      nodes=mean(nodes))


def apply_plan(state: State, plan: Sequence[Action]) -> bool:
    """Apply `plan` to `state`, stopping where a random effect ended the game earlier than
    planned. True when the turn is over: the game ended or the plan's last action is the
    game's end_turn. IllegalActionError at the first action the state refuses (the actions
    before it stay applied)."""
    for action in plan:
        if state.is_terminal:
            return True
        state.apply(action)
    return state.is_terminal or (bool(plan) and state.game.vt.is_end_turn(plan[-1].code))


def play_step(state: State, plan: Sequence[Action], stepwise: bool) -> bool:
    """Play what one plan of the mover decides, as the bot runner does through the referee:
    in a game with chance inside a turn (`stepwise`) only its first action, and the mover
    plans again; otherwise the whole plan, ending a turn it stopped short of. True when the
    turn is over. IllegalActionError as apply_plan."""
    if stepwise:
        plan = plan[:1]
    if apply_plan(state, plan):
        return True
    if not stepwise or not plan:  # a plan that stopped short of the end of its turn
        end_turn(state)
        return True
    return False


def end_turn(state: State) -> None:
    """End the mover's turn with the game's own end_turn action. (Not "until another player
    is to move": in conquest the player who ended the combat move goes on with the
    non-combat move.)"""
    is_end = state.game.vt.is_end_turn
    state.apply(next(a for a in state.legal_actions() if is_end(a.code)))


def _finish_randomly(state: State, player: int, rng: random.Random) -> None:
    """The rest of `player`'s turn as the thesis's random action player: uniform legal
    actions, end_turn among them."""
    is_end = state.game.vt.is_end_turn
    while not state.is_terminal and state.current_player == player:
        action = rng.choice(state.legal_actions())
        state.apply(action)
        if is_end(action.code):
            return


@dataclass
class ArenaResult:
    agents: list[str]
    config: ArenaConfig
    games: list[GameResult]
    seconds: float

    def pair(self, i: int, j: int) -> tuple[int, int, int]:
        """Wins, draws and losses of agent i against agent j."""
        w = d = lo = 0
        for g in self.games:
            if {g.a, g.b} != {i, j}:
                continue
            if g.winner is None:
                d += 1
            elif g.winner == i:
                w += 1
            else:
                lo += 1
        return w, d, lo

    def score(self, i: int, j: int) -> tuple[float, int, tuple[float, float]]:
        """Score fraction of i against j, games, and its 95% Wilson interval."""
        w, d, lo = self.pair(i, j)
        n = w + d + lo
        s = w + 0.5 * d
        return (s / n if n else float("nan")), n, wilson(s, n)

    def overall(self, i: int) -> tuple[float, int, tuple[float, float]]:
        w = d = n = 0
        for j in range(len(self.agents)):
            if j != i:
                pw, pd, pl = self.pair(i, j)
                w, d, n = w + pw, d + pd, n + pw + pd + pl
        s = w + 0.5 * d
        return (s / n if n else float("nan")), n, wilson(s, n)

    def mean_iterations(self, i: int) -> float:
        vals = [g.iterations[i] for g in self.games if i in g.iterations and g.iterations[i] > 0]
        return statistics.fmean(vals) if vals else 0.0

    def mean_turn_ms(self, i: int) -> float:
        vals = [g.turn_ms[i] for g in self.games if i in g.turn_ms]
        return statistics.fmean(vals) if vals else 0.0

    def as_dict(self) -> dict[str, Any]:
        n = len(self.agents)
        matrix = []
        for i in range(n):
            row: list[dict[str, Any] | None] = []
            for j in range(n):
                if i == j:
                    row.append(None)
                    continue
                s, g, (lo, hi) = self.score(i, j)
                w, d, lo_ = self.pair(i, j)
                row.append({"score": round(s, 4), "games": g, "wins": w, "draws": d, "losses": lo_,
                            "ci95": [round(lo, 4), round(hi, 4)]})
            matrix.append(row)
        overall = []
        for i in range(n):
            s, g, (lo, hi) = self.overall(i)
            overall.append({"agent": self.agents[i], "score": round(s, 4), "games": g,
                            "ci95": [round(lo, 4), round(hi, 4)],
                            "mean_iterations_per_turn": round(self.mean_iterations(i), 1),
                            "mean_search_ms_per_turn": round(self.mean_turn_ms(i), 1)})
        return {"agents": self.agents, "config": asdict(self.config), "games": len(self.games),
                "forfeits": sum(g.forfeit for g in self.games),
                "mean_turns": round(statistics.fmean(g.turns for g in self.games), 1) if self.games else 0,
                "seconds": round(self.seconds, 1), "matrix": matrix, "overall": overall}


def _play(args: tuple[GameTask, Sequence[str], ArenaConfig]) -> GameResult:
    return play_game(*args)


T = TypeVar("T")
R = TypeVar("R")


def in_processes(fn: Callable[[T], R], tasks: Sequence[T], jobs: int) -> Iterator[R]:
    """`fn` of every task: in this process and in order when `jobs` <= 1, else on `jobs`
    worker processes (forked where the platform can), each result as soon as it is done.
    The tasks not started are cancelled when the caller stops early or a task fails. The
    one runner of the experiments (arena, hidden, studies)."""
    if jobs <= 1:
        yield from map(fn, tasks)
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = [pool.submit(fn, t) for t in tasks]
        try:
            for f in as_completed(futures):
                yield f.result()
        finally:
            for f in futures:
                f.cancel()


def run_arena(specs: Sequence[str], games: int, cfg: ArenaConfig, *, jobs: int = 1, seed: int = 1,
              on_game: Callable[[GameResult, int, int], None] | None = None,
              done: Sequence[GameResult] = ()) -> ArenaResult:
    """Play the round robin; `on_game(result, done, total)` after each game. Games of the
    schedule already in `done` (by index, from an interrupted run with the same arguments)
    are kept, not played again."""
    for s in specs:  # fail early on a bad spec, in this process
        parse_agent(s)
    tasks = schedule(len(specs), games, seed)
    results: list[GameResult] = [r for r in done if r.index < len(tasks) and r.seed == tasks[r.index].seed]
    played = {r.index for r in results}
    tasks = [t for t in tasks if t.index not in played]
    t0 = time.monotonic()

    def collect(it: Iterator[GameResult]) -> None:
        for r in it:
            results.append(r)
            if on_game:
                on_game(r, len(results), len(tasks) + len(played))

    collect(in_processes(_play, [(t, list(specs), cfg) for t in tasks], jobs))
    results.sort(key=lambda r: r.index)
    return ArenaResult(list(specs), cfg, results, time.monotonic() - t0)
