"""`maag neat evolve`: evolve an evaluation network for heroes with NEAT (neat-python), as the
Hero Academy thesis evolved one, by play against the hand-written heuristic.

Setting: the research setting (in-process games, the agents search the full state, seeded
draws) at fixed iteration budgets, so a run does not depend on the machine's load.

A genome's fitness is its network used as the evaluation of AGENT (default greedy-turn at
--iterations 100 outcomes per turn: a real search over the turn that costs a few
milliseconds on map a-tiny) against the same AGENT with the heuristic: its score (wins +
draws/2) / games over --games games, each deal played from both seats. Every genome of a
generation plays the same deals, new deals each generation (from --seed), so a genome is
compared with its generation on equal terms and no deal is learned by heart.

The network reads heroes' 55 features (mg_heroes.h; State.features) and is configured by a
neat-python config file (default: the shipped lab/neat-heroes.cfg). Files in --out:
  neat-checkpoint-N   neat-python's checkpoint before generation N (--resume FILE goes on
                      from it, to --generations in all)
  history.json        fitness by generation: best, mean, standard deviation, species
  winner.json         the winner as neat-python's network JSON (metadata: game, map, agent,
                      budget, fitness, generation), for eval=neat:FILE: during the run the
                      genome of highest fitness so far; at the end the best of a final
                      selection (--final-games new games for each of the last generation's
                      5 best and the run's best genome)
  fitness.png         fitness by generation (matplotlib)
The winner's fitness is the best of many noisy scores; measure it afresh with maag arena.

Examples:
    maag neat evolve --map a-tiny --generations 10 --population 30 --games 10 --out runs/tiny
    maag neat evolve --resume runs/tiny/neat-checkpoint-5 --generations 20 --out runs/tiny
    maag arena "greedy-turn:eval=neat:runs/tiny/winner.json" greedy-turn --map a-tiny \\
        --iterations 100 --turn-ms 0 --games 200
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maag.bots.agents import AGENTS, parse_agent
from maag.lab.arena import ArenaConfig, GameTask, play_game

__all__ = ["CONFIG", "EvolveOptions", "evolve", "export_winner", "plot_history", "register"]

CONFIG = Path(__file__).resolve().parent / "neat-heroes.cfg"
MAPS = ("a-tiny", "a-small", "a")


@dataclass(frozen=True)
class EvolveOptions:
    out: Path
    map: str = "a-tiny"
    generations: int = 10
    population: int | None = None  # None: the config's pop_size
    games: int = 10
    agent: str = "greedy-turn"
    iterations: int = 100
    seed: int = 1
    jobs: int = 1
    config: Path = CONFIG
    resume: Path | None = None
    final_games: int = 40


def load_config(path: Path, population: int | None) -> Any:
    import neat

    cfg = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                      neat.DefaultStagnation, str(path))
    if population is not None:
        cfg.pop_size = population
    return cfg


def network_json(genome: Any, config: Any, metadata: dict[str, Any]) -> str:
    """The genome's feed-forward network in neat-python's network JSON."""
    import neat
    from neat.export import export_network_json

    net = neat.nn.FeedForwardNetwork.create(genome, config)
    return str(export_network_json(net, metadata={"game": "heroes", **metadata}))


def deals(opts: EvolveOptions, generation: int, games: int | None = None) -> list[int]:
    """The deal seeds of a generation (the same for each of its genomes); generation -1: the
    final selection's."""
    rng = random.Random(opts.seed * 1_000_003 + generation)
    return [rng.getrandbits(62) for _ in range(((games or opts.games) + 1) // 2)]


# Genomes of the last generation that meet again in the final selection.
FINALISTS = 5


def select_winner(opts: EvolveOptions, config: Any, finalists: list[Any], best_ever: Any | None,
                  generation: int, log: Callable[[str], None]) -> Any:
    """The winner: among the best genomes of the last generation and the best of the run, the
    one with the best score over opts.final_games new games (a genome's fitness is the best of
    many noisy scores; this picks on fresh deals). Writes winner.json."""
    pool = list(finalists)
    if best_ever is not None and all(g.key != best_ever.key for g in pool):
        pool.append(best_ever)
    seeds = deals(opts, -1, opts.final_games)
    best, best_score = None, -1.0
    with tempfile.TemporaryDirectory(prefix="maag-neat-") as work:
        for g in pool:
            score = _fitness((g, config, opts, seeds, work))
            log(f"final selection: genome {g.key} (fitness {g.fitness:.3f}) scores {score:.3f} "
                f"over {2 * len(seeds)} new games")
            if score > best_score:
                best, best_score = g, score
    assert best is not None
    export_winner(best, config, opts, generation, {"selection_score": best_score,
                                                   "selection_games": 2 * len(seeds)})
    return best


def play_against_heuristic(spec: str, opts: EvolveOptions, seeds: list[int]) -> float:
    """Score of agent `spec` against opts.agent with the heuristic, each deal from both seats."""
    cfg = ArenaConfig(turn_ms=None, iterations=opts.iterations,
                      game_config={"map": opts.map, "draws": "seeded"})
    score = 0.0
    n = 0
    for i, s in enumerate(seeds):
        for seat in (0, 1):
            r = play_game(GameTask(2 * i + seat, 0, 1, seat, s), [spec, opts.agent], cfg)
            score += 1.0 if r.winner == 0 else 0.5 if r.winner is None else 0.0
            n += 1
    return score / n


def _fitness(args: tuple[Any, Any, EvolveOptions, list[int], str]) -> float:
    genome, config, opts, seeds, workdir = args
    path = Path(workdir) / f"genome-{genome.key}.json"
    path.write_text(network_json(genome, config, {}))
    try:
        return play_against_heuristic(f"{opts.agent}:eval=neat:{path}", opts, seeds)
    finally:
        path.unlink()


def _history_path(opts: EvolveOptions) -> Path:
    return opts.out / "history.json"


def read_history(opts: EvolveOptions) -> list[dict[str, Any]]:
    p = _history_path(opts)
    if not p.exists():
        return []
    data = json.loads(p.read_text())
    return list(data["generations"])


def export_winner(genome: Any, config: Any, opts: EvolveOptions, generation: int,
                  extra: dict[str, Any] | None = None) -> Path:
    path = opts.out / "winner.json"
    meta = {"map": opts.map, "agent": opts.agent, "iterations": opts.iterations, "games": opts.games,
            "fitness": genome.fitness, "generation": generation, "genome_id": genome.key, **(extra or {})}
    path.write_text(network_json(genome, config, meta))
    return path


def plot_history(history: list[dict[str, Any]], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gens = [h["generation"] for h in history]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(gens, [h["best"] for h in history], marker="o", label="best genome")
    mean = [h["mean"] for h in history]
    sd = [h["stdev"] for h in history]
    ax.plot(gens, mean, marker="s", label="population mean")
    ax.fill_between(gens, [m - s for m, s in zip(mean, sd, strict=True)],
                    [m + s for m, s in zip(mean, sd, strict=True)], alpha=0.2, label="mean ± 1 sd")
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1, label="even with the heuristic")
    ax.set_xlabel("generation")
    ax.set_ylabel("score against the heuristic")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def evolve(opts: EvolveOptions, log: Callable[[str], None] = print,
           on_genome: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Run (or resume) the evolution; returns the fitness history. `on_genome(done, total)`
    after each genome evaluated in this run."""
    import neat

    opts.out.mkdir(parents=True, exist_ok=True)
    config = load_config(opts.config, opts.population)
    if opts.resume is not None:
        pop = neat.Checkpointer.restore_checkpoint(str(opts.resume), new_config=config)
        history = [h for h in read_history(opts) if h["generation"] < pop.generation]
    else:
        pop = neat.Population(config, seed=opts.seed)
        history = []
    best_fitness = max((h["best"] for h in history), default=float("-inf"))
    todo = opts.generations - pop.generation
    if todo <= 0:
        log(f"nothing to do: generation {pop.generation} of {opts.generations} already reached")
        return history
    pop.add_reporter(neat.Checkpointer(1, filename_prefix=str(opts.out / "neat-checkpoint-")))
    total = todo * config.pop_size
    done = 0
    finalists: list[Any] = []  # the best genomes of the latest generation evaluated
    t0 = time.monotonic()
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")

    def eval_genomes(genomes: list[tuple[int, Any]], cfg: Any) -> None:
        nonlocal done, best_fitness
        gen = pop.generation
        seeds = deals(opts, gen)
        tg = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="maag-neat-") as work:
            args = [(g, cfg, opts, seeds, work) for _, g in genomes]
            if opts.jobs > 1:
                with ProcessPoolExecutor(max_workers=opts.jobs, mp_context=ctx) as pool:
                    for (_, g), f in zip(genomes, pool.map(_fitness, args), strict=True):
                        g.fitness = f
                        done += 1
                        if on_genome:
                            on_genome(done, total)
            else:
                for (_, g), a in zip(genomes, args, strict=True):
                    g.fitness = _fitness(a)
                    done += 1
                    if on_genome:
                        on_genome(done, total)
        fits = [g.fitness for _, g in genomes]
        finalists[:] = sorted((g for _, g in genomes), key=lambda g: -g.fitness)[:FINALISTS]
        best = max((g for _, g in genomes), key=lambda g: g.fitness)
        entry = {"generation": gen, "best": best.fitness, "mean": statistics.fmean(fits),
                 "stdev": statistics.pstdev(fits), "genomes": len(fits),
                 "species": len(pop.species.species), "nodes_of_best": len(best.nodes),
                 "connections_of_best": sum(c.enabled for c in best.connections.values()),
                 "seconds": round(time.monotonic() - tg, 1)}
        history.append(entry)
        if best.fitness > best_fitness:
            best_fitness = best.fitness
            export_winner(best, cfg, opts, gen)
        _history_path(opts).write_text(json.dumps({"options": _options_dict(opts), "generations": history},
                                                  indent=1) + "\n")
        elapsed = time.monotonic() - t0
        eta = elapsed / done * (total - done) if done else 0.0
        log(f"generation {gen}: best {best.fitness:.3f}, mean {entry['mean']:.3f} ± {entry['stdev']:.3f}, "
            f"{entry['species']} species, {entry['seconds']:.0f} s; ETA {eta / 60:.1f} min")

    pop.run(eval_genomes, todo)
    if opts.final_games > 0:
        select_winner(opts, config, finalists, pop.best_genome, pop.generation - 1, log)
    title = (f"NEAT on heroes map {opts.map}: {opts.agent} ({opts.iterations} it/turn) with the network "
             f"vs with the heuristic,\n{opts.games} games per genome, population {config.pop_size}")
    plot_history(history, opts.out / "fitness.png", title)
    return history


def _options_dict(opts: EvolveOptions) -> dict[str, Any]:
    return {"map": opts.map, "generations": opts.generations, "population": opts.population,
            "games": opts.games, "agent": opts.agent, "iterations": opts.iterations, "seed": opts.seed,
            "config": str(opts.config)}


def mid_game_states(map_name: str, n: int, seed: int = 1) -> list[Any]:
    """n positions of greedy-action self-play on `map_name` (research setting), a few turns in."""
    from maag.engine import Game

    game = Game("heroes", {"map": map_name, "draws": "seeded"})
    agent = parse_agent("greedy-action")
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < n:
        st = game.new_state(rng.getrandbits(62))
        for _ in range(rng.randrange(2, 9)):  # turns
            if st.is_terminal:
                break
            for a in agent.plan(st.observation(st.current_player), iterations=0, seed=rng.getrandbits(62)):
                st.apply(a)
                if st.is_terminal:
                    break
        if not st.is_terminal:
            out.append(st)
    return out


def speed(network: Path, agents: list[str], map_name: str, states: int, budget_ms: float,
          on_search: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Iterations per second of each agent with the heuristic and with eval=neat:network, on the
    same positions at the same time budget, one search after the other (the order alternating
    by position), in this one process: per agent the median over positions of each, and the
    median of the per-position ratio network / heuristic."""
    from maag.bots.cheating import CheatingAgent

    positions = mid_game_states(map_name, states)
    total = len(agents) * len(positions) * 2
    done = 0
    rows = []
    for spec in agents:
        plain = CheatingAgent(parse_agent(spec))
        net = CheatingAgent(parse_agent(f"{spec}{',' if ':' in spec else ':'}eval=neat:{network}"))
        ips: dict[str, list[float]] = {"heuristic": [], "network": []}
        ratios = []
        for i, st in enumerate(positions):
            order = [("heuristic", plain), ("network", net)]
            if i % 2:
                order.reverse()
            got = {}
            for name, agent in order:
                agent.plan(st, budget_ms=budget_ms, seed=i + 1)
                last = agent.last
                assert last is not None
                got[name] = last.stats.iterations / (last.stats.elapsed_ms / 1000.0)
                ips[name].append(got[name])
                done += 1
                if on_search:
                    on_search(done, total)
            ratios.append(got["network"] / got["heuristic"])
        rows.append({"agent": spec, "heuristic_ips": statistics.median(ips["heuristic"]),
                     "network_ips": statistics.median(ips["network"]), "ratio": statistics.median(ratios),
                     "ratio_min": min(ratios), "states": len(positions), "budget_ms": budget_ms})
    return rows


# ---- the command line ---------------------------------------------------------------------------

def register(sub: Any) -> None:
    p = sub.add_parser("neat", help="NEAT: evolve an evaluation network (neat-python)",
                       description="NEAT evaluation networks for heroes; see `maag neat evolve -h`.")
    nsub = p.add_subparsers(dest="neat_command", metavar="COMMAND")
    e = nsub.add_parser("evolve", help="evolve a heroes evaluation network against the heuristic",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("--out", "-o", type=Path, required=True, help="output folder (checkpoints, winner, plot)")
    e.add_argument("--map", default="a-tiny", choices=MAPS, help="heroes map (default a-tiny)")
    e.add_argument("--generations", "-g", type=int, default=10,
                   help="generations in all, counting those of a resumed run (default 10)")
    e.add_argument("--population", "-p", type=int, default=None,
                   help="genomes per generation (default: the config's pop_size, 20)")
    e.add_argument("--games", "-n", type=int, default=10,
                   help="games per genome, each deal from both seats (default 10)")
    e.add_argument("--agent", default="greedy-turn",
                   help="the search agent, with the network and with the heuristic (default greedy-turn)")
    e.add_argument("--iterations", type=int, default=100,
                   help="its iteration budget per turn, kernel units (default 100)")
    e.add_argument("--seed", type=int, default=1, help="seed of the population and of the deals (default 1)")
    e.add_argument("--jobs", "-j", type=int, default=1, help="processes evaluating genomes (default 1)")
    e.add_argument("--config", type=Path, default=CONFIG, help="neat-python config file (default: shipped)")
    e.add_argument("--final-games", type=int, default=40,
                   help="games of the final selection among the last generation's best (default 40; 0: "
                        "the winner is the genome of highest fitness)")
    e.add_argument("--resume", type=Path, default=None, metavar="FILE",
                   help="a neat-checkpoint-N file of an earlier run to go on from")
    s = nsub.add_parser("speed", help="iterations per second with a network vs with the heuristic",
                        description=speed.__doc__)
    s.add_argument("network", type=Path, help="a network file (neat-python's network JSON)")
    s.add_argument("--agents", default="greedy-turn,mcts,oep",
                   help="comma-separated search agents (default greedy-turn,mcts,oep)")
    s.add_argument("--map", default="a", choices=MAPS, help="heroes map (default a)")
    s.add_argument("--states", type=int, default=10, help="positions (default 10)")
    s.add_argument("--budget-ms", type=float, default=200.0, help="time budget of each search (default 200)")
    s.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.set_defaults(func=main, neat_parser=p)


def main(args: argparse.Namespace) -> int:
    if getattr(args, "neat_command", None) == "speed":
        return main_speed(args)
    if getattr(args, "neat_command", None) != "evolve":
        args.neat_parser.print_help()
        return 2
    err = _check(args)
    if err:
        print(f"maag neat evolve: {err}", file=sys.stderr)
        return 2
    opts = EvolveOptions(out=args.out, map=args.map, generations=args.generations, population=args.population,
                         games=args.games, agent=args.agent, iterations=args.iterations, seed=args.seed,
                         jobs=args.jobs, config=args.config, resume=args.resume, final_games=args.final_games)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(TextColumn("genomes"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as prog:
        bar = prog.add_task("genomes", total=None)
        history = evolve(opts, log=lambda s: console.print(s, highlight=False),
                         on_genome=lambda d, t: prog.update(bar, completed=d, total=t))
    if history:
        console.print(f"wrote {opts.out / 'winner.json'}, {opts.out / 'history.json'} and "
                      f"{opts.out / 'fitness.png'}", highlight=False)
    return 0


def _check(args: argparse.Namespace) -> str | None:
    for name in ("generations", "games", "iterations", "jobs"):
        if getattr(args, name) < 1:
            return f"--{name} must be at least 1"
    if args.final_games < 0:
        return "--final-games must be at least 0"
    if args.population is not None and args.population < 2:
        return "--population must be at least 2"
    if not args.config.is_file():
        return f"no config file {args.config}"
    if args.resume is not None and not args.resume.is_file():
        return f"no checkpoint file {args.resume}"
    name = args.agent.partition(":")[0]
    if name not in AGENTS or not any(p.name == "eval" for p in AGENTS[name].params):
        return f"--agent must be a search agent that takes eval (e.g. greedy-turn, mcts), not {args.agent!r}"
    if "eval=" in args.agent:
        return "--agent must not set eval: the network and the heuristic are what is compared"
    try:
        parse_agent(args.agent)
    except ValueError as e:
        return str(e)
    return None


def main_speed(args: argparse.Namespace) -> int:
    from maag.engine.evalnet import NetworkFileError, load_network
    from maag.engine.machine import machine
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    try:
        load_network(args.network)
        for a in agents:
            parse_agent(f"{a}{',' if ':' in a else ':'}eval=neat:{args.network}")
    except (NetworkFileError, ValueError) as e:
        print(f"maag neat speed: {e}", file=sys.stderr)
        return 2
    if args.states < 1 or args.budget_ms <= 0:
        print("maag neat speed: --states must be at least 1 and --budget-ms positive", file=sys.stderr)
        return 2
    console = Console(stderr=True)
    with Progress(TextColumn("searches"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as prog:
        bar = prog.add_task("searches", total=None)
        rows = speed(args.network, agents, args.map, args.states, args.budget_ms,
                     on_search=lambda d, t: prog.update(bar, completed=d, total=t))
    if args.json:
        for r in rows:
            print(json.dumps({**r, "map": args.map, "machine": machine()}))
        return 0
    print(f"heroes map {args.map}, {args.states} positions, {args.budget_ms:g} ms per search, medians:")
    print(f"{'agent':<24} {'heuristic it/s':>15} {'network it/s':>13} {'network/heuristic':>18} {'min':>6}")
    for r in rows:
        print(f"{r['agent']:<24} {r['heuristic_ips']:>15.0f} {r['network_ips']:>13.0f} {r['ratio']:>18.2f} "
              f"{r['ratio_min']:>6.2f}")
    return 0
