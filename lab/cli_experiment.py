"""`maag experiment hidden`: what hidden information costs, and what determinization buys,
measured in the real game (random draws, hidden hands) with in-process games.

Entrants are bundled agents (NAME or NAME:key=value,...), each given only its seat's
observation, or their cheating twins, written cheat:NAME..., which search the true state,
or peeking twins, peek:NAME..., which search it with the decks shuffled again (every hand and
secret, not the next draws; games whose state orders its decks: cards).
These twins exist only here (cheating ones also in `maag arena --view full`, and in
`maag match` as the bot process `maag experiment twin-bot`): `maag bot run` and the
referee cannot run one.

Pairings come from presets built on the perfect-information agent --best, or from --pair:
  cost      best, pimc (--k determinizations) and ismcts, each against its cheating twin
  baseline  pimc and ismcts against best run on one random determinization
  k         pimc with each of --ks determinizations against best on one determinization

Every pairing plays --games games (seats alternate, each deal and draw seed from both
seats). The table gives A's wins, draws and losses, its score with a 95% interval, the Elo
difference and the p-value of the exact binomial test of equal strength on decisive games.

The 1 s table of docs/results-hidden.md is also a declared study, run by `maag experiment
heroes-hidden` (lab/studies/heroes-hidden.toml; games played by hidden.play_game too);
this command is the shortcut for pairings given on the command line.

Examples:
    maag experiment hidden --preset cost --preset baseline --games 100 --turn-ms 1000 --jobs 2
    maag experiment hidden --best "mcts:rollout_turns=2" --preset k --ks 2,4,8 --turn-ms 200
    maag experiment hidden --pair ismcts cheat:ismcts --games 20 --iterations 5000 --turn-ms 0 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from maag.bots import AgentError
from maag.engine.machine import machine
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # loaded on demand: other commands (maag bot run) never load the cheating twins
    from maag.lab.hidden import GameRecord, PairResult

PRESETS = ("cost", "baseline", "k")  # maag.lab.hidden.PRESETS

# The perfect-information agent the presets build on, by game (docs/results-hidden.md,
# docs/results-cards.md).
DEFAULT_BEST = {"heroes": "mcts:rollout_turns=2", "cards": "mcts"}


def register(sub: Any) -> None:
    p = sub.add_parser("experiment", help="measurement experiments (hidden information, the thesis tables)",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    esub = p.add_subparsers(dest="experiment", metavar="WHICH")
    h = esub.add_parser("hidden", help="determinized agents vs cheating twins and single determinizations",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_argument("--preset", action="append", choices=PRESETS, default=[],
                   help="a named set of pairings (repeatable)")
    h.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"), default=[],
                   help="one pairing (repeatable); cheat:SPEC for a cheating twin, peek:SPEC for a "
                        "peeking one (hands and secrets, not the decks' order; cards)")
    h.add_argument("--best", default=None,
                   help="the perfect-information agent the presets build on (default: "
                        + "; ".join(f"{g}: {b}" for g, b in DEFAULT_BEST.items()) + ")")
    h.add_argument("--k", type=int, default=8,
                   help="determinizations of pimc in the cost and baseline presets (default 8)")
    h.add_argument("--ks", default="2,4,16,32",
                   help="determinizations tried by the k preset (default 2,4,16,32)")
    h.add_argument("--games", "-n", type=int, default=20, help="games per pairing, both seats (default 20)")
    h.add_argument("--turn-ms", type=float, default=1000.0,
                   help="time budget of every turn in ms (default 1000; 0: iterations only)")
    h.add_argument("--iterations", type=int, default=None,
                   help="iteration budget of every turn (kernel units)")
    h.add_argument("--game", default="heroes", help="the game (default heroes; see maag games)")
    h.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a game option (repeatable; see maag games)")
    h.add_argument("--map", default=None, choices=["a", "a-small", "a-tiny"],
                   help="heroes: the map (default a; the same as -o map=...)")
    h.add_argument("--draws", default=None, choices=["random", "seeded"],
                   help="heroes: card draws (default random: the real game)")
    h.add_argument("--jobs", "-j", type=int, default=1, help="games played at once, one process each")
    h.add_argument("--seed", type=int, default=1, help="seed of the deals and draws (default 1)")
    h.add_argument("--data", metavar="FILE", default=None,
                   help="append every finished game to FILE (JSON lines) and count the games it holds "
                        "for these pairings and settings: rerun the command to go on after an "
                        "interruption, or with a larger --games to add games")
    h.add_argument("--json", action="store_true",
                   help="machine-readable: one JSON object per finished game, then the summary object last")
    h.set_defaults(func=run_hidden)
    a = esub.add_parser("agreement",
                        help="how often honest agents decide as a player who sees the hidden cards",
                        description=_agreement_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("agents", nargs="+", metavar="AGENT",
                   help="entrants: bundled agents (from the observation), cheat:SPEC or peek:SPEC twins")
    a.add_argument("--reference", default="mcts",
                   help="the agent whose cheating twin makes the reference decision (default mcts)")
    a.add_argument("--positions", type=int, default=200, help="positions (default 200)")
    a.add_argument("--iterations", type=int, default=20000, help="the entrants' iterations (default 20000)")
    a.add_argument("--ref-iterations", type=int, default=60000,
                   help="the reference's iterations (default 60000)")
    a.add_argument("--game", default="cards", help="the game (default cards; see maag games)")
    a.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a game option (repeatable; see maag games)")
    a.add_argument("--jobs", "-j", type=int, default=1, help="positions decided at once, one process each")
    a.add_argument("--seed", type=int, default=1,
                   help="seed of the games the positions come from (default 1)")
    a.add_argument("--json", action="store_true", help="machine-readable: one JSON object")
    a.set_defaults(func=run_agreement, map=None, draws=None)
    c = esub.add_parser("conquest", help="the thesis's conquest tables (NE-MCTS, BB-MCTS, OEP, Hard AI)",
                        description=_conquest_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--budget", action="append", default=[],
                   help="budget per move phase: 1s, 250ms, or 84it (MCTS iterations; OEP gets 9 "
                        "generations per 84); repeatable (default: 84it 420it 1s 5s)")
    c.add_argument("--games", "-n", type=int, default=20, help="games per match-up, both seats (default 20)")
    c.add_argument("--baseline-games", type=int, default=None,
                   help="games per match-up of the baselines' table (default: --games; 0: no such table)")
    c.add_argument("--jobs", "-j", type=int, default=1, help="games played at once, one process each")
    c.add_argument("--seed", type=int, default=1, help="seed of the games' dice (default 1)")
    c.add_argument("--markdown", metavar="FILE", help="also write the tables as markdown to FILE")
    c.add_argument("--plot", metavar="PNG", help="also plot each agent's score per budget to PNG")
    c.add_argument("--json", action="store_true",
                   help="machine-readable: one JSON object per finished game, then one per table")
    c.set_defaults(func=run_conquest)
    k = esub.add_parser("cards", help="the card-game thesis's tables (RAP, RMP, UCB, UCT; spec/cards.md §9)",
                        description=_cards_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    k.add_argument("--table", action="append", default=[], metavar="T",
                   help="a table to play: 9.1, 9.2, 9.3, 9.4c, 9.4b (repeatable; default: all)")
    k.add_argument("--sims", default=None,
                   help="simulation counts of tables 9.2 and 9.3, comma-separated (default: the thesis's)")
    k.add_argument("--games", "-n", type=int, default=100,
                   help="games per point, both seats (default 100; points that have them already are "
                        "not played again, so a larger number adds games)")
    k.add_argument("--jobs", "-j", type=int, default=1, help="games played at once, one process each")
    k.add_argument("--seed", type=int, default=1, help="seed of the deals and draws (default 1)")
    k.add_argument("--data", default="docs/data/cards-study.jsonl",
                   help="the games played, one JSON line each; read to resume (default %(default)s)")
    k.add_argument("--report", action="store_true", help="play nothing: write the report from --data")
    k.add_argument("--markdown", metavar="FILE", help="write the tables as markdown to FILE")
    k.add_argument("--plots", metavar="DIR", help="write the §9.2 and §9.3 plots (PNG) into DIR")
    k.set_defaults(func=run_cards)
    t = esub.add_parser("twin-bot", help="a cheating or peeking twin as a bot process, for `maag match` "
                                         "(experiments only)",
                        description=_twin_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("twin", metavar="SPEC", help="cheat:AGENT or peek:AGENT (AGENT as maag.bots parses it), "
                                                "or the honest infer:AGENT")
    t.add_argument("--match-seed", type=int, default=None,
                   help="the --seed of the match it plays in (a twin rebuilds its games from it; "
                        "not for infer:)")
    t.add_argument("--connect", default=None, metavar="ADDRESS",
                   help="the referee's address (default $MAAG_CONNECT, which `maag match` sets)")
    t.add_argument("--token", default=None,
                   help="the bot's token (default $MAAG_TOKEN, which `maag match` sets)")
    t.add_argument("--concurrency", type=int, default=1, metavar="N", help="games at once (default 1)")
    t.add_argument("--seed", type=int, default=None, help="seed of the agent's searches")
    t.set_defaults(func=run_twin_bot)
    _register_studies(esub)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


STUDY_EPILOG = """Studies are declared in lab/studies/NAME.toml (the format: pydoc
maag.lab.study). Every finished game is appended to the data file, so an
interrupted run goes on where it stopped with the same command, and no game is played twice.

Examples:
    maag experiment heroes-fig5 --jobs 2          # play what the data file lacks
    maag experiment report heroes-fig5            # docs/studies/heroes-fig5.md and .png
    maag experiment run my-study.toml --jobs 2    # a study file of one's own
"""


def _study_options(q: Any, report: bool = False) -> None:
    q.add_argument("--data", metavar="FILE", default=None,
                   help="the games played, one JSON line each (default docs/data/studies/NAME.jsonl)")
    q.add_argument("--games", "-n", type=int, default=None,
                   help="games per pairing and point instead of the study's (more games are added)")
    q.add_argument("--budget-factor", type=float, default=None, metavar="F",
                   help="multiply every budget of the study by F (a quick look: 0.01; the data "
                        "of other budgets is kept apart)")
    if report:
        q.add_argument("--docs", default="docs", metavar="DIR",
                       help="where the report goes: DIR/studies/NAME.md and .png (default docs)")
        return
    q.add_argument("--jobs", "-j", type=int, default=1, help="games played at once, one process each")
    q.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="play the games on this Dask scheduler instead (workers need maag installed)")
    q.add_argument("--report", metavar="DIR", nargs="?", const="docs", default=None,
                   help="afterwards write the report into DIR/studies/ (default docs)")


def _register_studies(esub: Any) -> None:
    from maag.lab import study

    for name in study.shipped():
        q = esub.add_parser(name, help=f"study: {_study_title(name)}", epilog=STUDY_EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        _study_options(q)
        q.set_defaults(func=run_study, study=name)
    q = esub.add_parser("run", help="run a study from its file (or a shipped one by name)",
                        epilog=STUDY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("study", metavar="NAME|FILE")
    _study_options(q)
    q.set_defaults(func=run_study)
    q = esub.add_parser("report", help="write a study's tables and plot into docs/ from its data file",
                        epilog=STUDY_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("study", metavar="NAME|FILE")
    _study_options(q, report=True)
    q.set_defaults(func=report_study)


def _study_title(name: str) -> str:
    from maag.lab import study

    return study.title_of(name)


def _load_study(args: argparse.Namespace, what: str) -> Any:
    from maag.lab import study

    try:
        s = study.load(args.study)
        if args.games is not None and args.games < 1:
            raise ValueError("--games must be at least 1")
        if args.budget_factor is not None:
            s = study.scaled(s, args.budget_factor)
    except ValueError as e:
        print(f"maag experiment {what}: {e}", file=sys.stderr)
        return None
    return s


def _data(args: argparse.Namespace, s: Any) -> str:
    return str(args.data or f"docs/data/studies/{s.name}.jsonl")


def _command(args: argparse.Namespace, s: Any) -> str:
    cmd = f"maag experiment {s.name}" if args.study in _shipped() else f"maag experiment run {args.study}"
    if args.games:
        cmd += f" --games {args.games}"
    if args.budget_factor is not None:
        cmd += f" --budget-factor {args.budget_factor:g}"
    return cmd


def _shipped() -> list[str]:
    from maag.lab import study

    return study.shipped()


class _PlainProgress:
    """Progress as a line at most every `every` seconds (and at the last game): games done of
    the total, time elapsed and the time left at the rate so far."""

    def __init__(self, console: Console, every: float = 60.0) -> None:
        self.console, self.every = console, every
        self.total, self.done = 0, 0
        self.start = self.last = time.monotonic()

    def game(self, what: str) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.last < self.every and self.done < self.total:
            return
        self.last = now
        spent = now - self.start
        left = spent / self.done * max(0, self.total - self.done)
        self.console.print(f"{self.done}/{self.total} games, {_clock(spent)} elapsed, "
                           f"ETA {_clock(left)} (last: {what})", highlight=False, soft_wrap=True)


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def run_study(args: argparse.Namespace) -> int:
    import rich.progress as rp
    from maag.lab import study

    s = _load_study(args, "run")
    if s is None:
        return 2
    if args.jobs < 1:
        print("maag experiment: --jobs must be at least 1", file=sys.stderr)
        return 2
    data = _data(args, s)
    console = Console(stderr=True)
    with rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
                     rp.TimeElapsedColumn(), rp.TextColumn("ETA"), rp.TimeRemainingColumn(),
                     console=console) as prog:
        bar = prog.add_task(s.name, total=None)
        # Off a terminal (a log file, nohup) rich draws no bar, so a plain line every minute.
        plain = _PlainProgress(console) if not console.is_terminal else None

        def on_start(todo: int, held: int) -> None:
            console.print(f"{s.title}: {todo} games to play, {held} in {data}", highlight=False)
            prog.update(bar, total=todo)
            if plain is not None:
                plain.total = todo

        def on_game(rec: dict[str, Any]) -> None:
            point = "" if rec["point"] is None else f" at {rec['point']}"
            what = f"{rec['a']} vs {rec['b']}{point}"
            prog.update(bar, advance=1, description=what)
            if plain is not None:
                plain.game(what)

        try:
            study.run(s, data, games=args.games, jobs=args.jobs, dask=args.dask, on_start=on_start,
                      on_game=on_game)
        except KeyboardInterrupt:
            console.print(f"interrupted; the games played are in {data}: the same command goes on",
                          highlight=False)
            return 130
    cs = study.cells(s, data, args.games)
    print(study.markdown(s, cs).split("## Results", 1)[1].strip())
    if args.report:
        for path in study.report(s, data, args.report, args.games, _command(args, s)):
            console.print(f"wrote {path}", highlight=False)
    return 0


def report_study(args: argparse.Namespace) -> int:
    from maag.lab import study

    s = _load_study(args, "report")
    if s is None:
        return 2
    data = _data(args, s)
    for path in study.report(s, data, args.docs, args.games, _command(args, s)):
        print(f"wrote {path}")
    return 0


def _pairs(args: argparse.Namespace) -> list[tuple[str, str]]:
    from maag.lab.hidden import preset_pairs

    ks = [int(k) for k in args.ks.split(",") if k.strip()]
    best = args.best or DEFAULT_BEST.get(args.game, "mcts")
    pairs: list[tuple[str, str]] = []
    for name in args.preset:
        pairs += preset_pairs(name, best, args.k, ks)
    pairs += [(a, b) for a, b in args.pair]
    seen: set[tuple[str, str]] = set()
    return [p for p in pairs if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]


def _line(r: GameRecord, done: int, total: int, pairs: list[tuple[str, str]], eta_s: float) -> str:
    a, b = pairs[r.pair]
    p1, p2 = (a, b) if r.a_seat == 0 else (b, a)
    res = "draw" if r.winner is None else f"{pairs[r.pair][r.winner]} wins"
    extra = " (forfeit: illegal plan)" if r.forfeit else ""
    eta = f", ETA {eta_s / 60:.0f} min" if done < total else ""
    return f"game {done}/{total}: {p1} vs {p2}: {res} in {r.turns} turns, {r.seconds:.0f} s{extra}{eta}"


def _table(results: list[PairResult], title: str) -> Table:
    t = Table(title=title)
    for col in ("A", "B", "W", "D", "L", "score", "95% CI", "Elo", "p", "iter/turn A", "iter/turn B"):
        t.add_column(col, justify="left" if col in ("A", "B") else "right")
    for r in results:
        d = r.as_dict()
        lo, hi = d["score_ci95"]
        elo = "-" if d["elo"] is None else f"{d['elo']:+.0f}"
        t.add_row(r.a, r.b, str(d["wins"]), str(d["draws"]), str(d["losses"]), f"{d['score']:.3f}",
                  f"[{lo:.3f}, {hi:.3f}]", elo, f"{d['p_value']:.3g}", f"{d['mean_iterations'][0]:,.0f}",
                  f"{d['mean_iterations'][1]:,.0f}")
    return t


def run_hidden(args: argparse.Namespace) -> int:
    pairs = _pairs(args)
    if not pairs:
        print("maag experiment hidden: name at least one --preset or --pair", file=sys.stderr)
        return 2
    if args.games < 1 or args.jobs < 1:
        print("maag experiment hidden: --games and --jobs must be at least 1", file=sys.stderr)
        return 2
    turn_ms = args.turn_ms if args.turn_ms > 0 else None
    if turn_ms is None and not args.iterations:
        print("maag experiment hidden: give --turn-ms or --iterations", file=sys.stderr)
        return 2
    from maag.lab.hidden import HiddenConfig, run_pairs

    try:
        game_config = _game_config(args)
    except ValueError as e:
        print(f"maag experiment hidden: {e}", file=sys.stderr)
        return 2
    cfg = HiddenConfig(turn_ms=turn_ms, iterations=args.iterations, game=args.game, game_config=game_config)
    console = Console(stderr=args.json)

    t0 = time.monotonic()

    def on_game(r: GameRecord, done: int, total: int) -> None:
        eta_s = (time.monotonic() - t0) / done * (total - done)
        if args.json:
            print(json.dumps({"event": "game", "n": done, "of": total, "a": pairs[r.pair][0],
                              "b": pairs[r.pair][1], "a_seat": r.a_seat + 1, "seed": r.seed,
                              "winner": None if r.winner is None else "ab"[r.winner], "turns": r.turns,
                              "seconds": round(r.seconds, 2), "forfeit": r.forfeit,
                              "eta_s": round(eta_s)}), flush=True)
        else:
            console.print(_line(r, done, total, pairs, eta_s), highlight=False)

    try:
        results = run_pairs(pairs, args.games, cfg, jobs=args.jobs, seed=args.seed, data=args.data,
                            on_game=on_game)
    except AgentError as e:
        print(f"maag experiment hidden: {e}", file=sys.stderr)
        return 2
    elapsed = time.monotonic() - t0
    budget = f"{turn_ms:g} ms" if turn_ms else f"{args.iterations} iterations"
    if args.json:
        print(json.dumps({"experiment": "hidden", "config": {**cfg.__dict__, "games": args.games,
                                                             "seed": args.seed, "jobs": args.jobs},
                          "pairs": [r.as_dict() for r in results], "seconds": round(elapsed, 1),
                          "machine": machine()}))
        return 0
    options = ", ".join(f"{k} {v}" for k, v in game_config.items())
    console.print(_table(results, f"maag experiment hidden: {args.game}, {args.games} games per pairing, "
                                  f"{budget} per turn" + (f", {options}" if options else "")
                                  + f", {elapsed:.0f} s"))
    return 0


def _twin_doc() -> str:
    from maag.lab import twin_bot

    return twin_bot.__doc__ or ""


def run_twin_bot(args: argparse.Namespace) -> int:
    import logging
    import os

    from maag.clients import BotError
    from maag.lab import twin_bot

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        stream=sys.stderr)
    address = args.connect or os.environ.get("MAAG_CONNECT")
    token = args.token or os.environ.get("MAAG_TOKEN")
    if not address or not token:
        print("maag experiment twin-bot: no address or token: pass --connect and --token (or run it "
              "under `maag match`, which sets $MAAG_CONNECT and $MAAG_TOKEN)", file=sys.stderr)
        return 2
    try:
        stats = twin_bot.run(args.twin, args.match_seed, address, token, concurrency=args.concurrency,
                             seed=args.seed)
    except (BotError, AgentError, ValueError) as e:
        print(f"maag experiment twin-bot: {e}", file=sys.stderr)
        return 2
    print(f"maag experiment twin-bot: {stats.cheated} plan(s) on the true state, {stats.lost} on the "
          "observation", file=sys.stderr)
    return 0


def _agreement_doc() -> str:
    from maag.lab import agreement

    return f"{agreement.__doc__}\n\nExample:\n    maag experiment agreement --game cards mcts pimc ismcts " \
        "peek:mcts cheat:mcts --positions 200 -j 2"


def run_agreement(args: argparse.Namespace) -> int:
    if min(args.positions, args.iterations, args.ref_iterations, args.jobs) < 1:
        print("maag experiment agreement: --positions, --iterations, --ref-iterations and --jobs must be "
              "at least 1", file=sys.stderr)
        return 2
    from maag.engine import Game
    from maag.lab import agreement

    try:
        game = Game(args.game, _game_config(args))
        console = Console(stderr=True)
        t0 = time.monotonic()

        def on_position(done: int, total: int) -> None:
            eta = (time.monotonic() - t0) / done * (total - done)
            if done % 10 == 0 or done == total:
                console.print(f"position {done}/{total}, ETA {eta / 60:.0f} min", highlight=False)

        results = agreement.run_agreement(game, args.agents, positions=args.positions,
                                          reference=args.reference, ref_iterations=args.ref_iterations,
                                          iterations=args.iterations, seed=args.seed, jobs=args.jobs,
                                          on_position=on_position)
    except (AgentError, ValueError) as e:
        print(f"maag experiment agreement: {e}", file=sys.stderr)
        return 2
    rows = [r.as_dict() for r in results]
    if args.json:
        print(json.dumps({"experiment": "agreement", "game": args.game,
                          "reference": f"cheat:{args.reference}",
                          "ref_iterations": args.ref_iterations, "iterations": args.iterations,
                          "positions": args.positions, "seed": args.seed, "agents": rows,
                          "seconds": round(time.monotonic() - t0, 1), "machine": machine()}))
        return 0
    table = Table(title=f"maag experiment agreement: {args.game}, {args.positions} positions, reference "
                        f"cheat:{args.reference} at {args.ref_iterations} iterations, agents at "
                        f"{args.iterations}")
    for col in ("agent", "agrees", "share", "95% CI"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for r in rows:
        table.add_row(r["agent"], f"{r['agree']}/{r['positions']}", f"{r['share']:.3f}",
                      f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]")
    Console().print(table)
    return 0


def _game_config(args: argparse.Namespace) -> dict[str, Any]:
    """The game's options from -o KEY=VALUE (and heroes' --map, --draws), checked by the
    game itself: ValueError with the reason for an unknown game or a bad option."""
    from maag.engine import registry

    if args.game not in registry.names():
        raise ValueError(f"unknown game {args.game!r}; known: {', '.join(registry.names())}")
    config: dict[str, Any] = {}
    if args.game == "heroes":
        config = {"map": args.map or "a", "draws": args.draws or "random"}
    elif args.map or args.draws:
        raise ValueError("--map and --draws are heroes options; use -o KEY=VALUE")
    for kv in args.option:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            raise ValueError(f"a game option is KEY=VALUE, not {kv!r}")
        config[key.strip()] = value.strip()
    registry.get(args.game).make_config(dict(config))  # the game rejects a bad option, with the reason
    return config


def _conquest_doc() -> str:
    from maag.lab import conquest

    return f"`maag experiment conquest`: {conquest.__doc__}"


def run_conquest(args: argparse.Namespace) -> int:
    from maag.lab import conquest
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    try:
        budgets = [conquest.parse_budget(b) for b in (args.budget or ["84it", "420it", "1s", "5s"])]
    except ValueError as e:
        print(f"maag experiment conquest: {e}", file=sys.stderr)
        return 2
    if args.games < 1 or args.jobs < 1:
        print("maag experiment conquest: --games and --jobs must be at least 1", file=sys.stderr)
        return 2
    base_games = args.games if args.baseline_games is None else args.baseline_games
    specs = conquest.tables(budgets, baselines=base_games > 0)
    console = Console(stderr=True)
    done_tables: list[tuple[conquest.TableSpec, Any]] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeRemainingColumn(), console=console, transient=True) as prog:
        for t in specs:
            games = base_games if t.budget is None else args.games
            task = prog.add_task(t.title, total=None)

            def on_game(r: Any, done: int, total: int, task: Any = task, t: Any = t) -> None:
                prog.update(task, completed=done, total=total)
                if args.json:
                    print(json.dumps({"event": "game", "table": t.title, "a": t.agents[r.a],
                                      "b": t.agents[r.b],
                                      "a_seat": r.a_seat + 1, "seed": r.seed,
                                      "winner": None if r.winner is None else t.agents[r.winner],
                                      "turns": r.turns, "seconds": round(r.seconds, 2)}), flush=True)

            res = conquest.run_table(t, games, jobs=args.jobs, seed=args.seed, on_game=on_game)
            done_tables.append((t, res))
            if args.json:
                print(json.dumps({**conquest.summary(t, res), "machine": machine()}), flush=True)
            else:
                console.print(f"\n[bold]{t.title}[/bold]: {games} games per match-up, {res.seconds:.0f} s")
                Console().print(conquest.markdown(t, res), highlight=False, markup=False)
    if args.markdown:
        with open(args.markdown, "w") as f:
            for t, res in done_tables:
                games = res.as_dict()["games"]
                f.write(f"### {t.title}\n\n{games} games in all, {res.seconds:.0f} s\n\n"
                        f"{conquest.markdown(t, res)}\n\n")
    if args.plot:
        conquest.plot(done_tables, args.plot)
    return 0


def _cards_doc() -> str:
    from maag.lab import cards

    return (f"`maag experiment cards`: {cards.__doc__}\n\nExamples:\n"
            "    maag experiment cards --table 9.1 --games 400 --jobs 2\n"
            "    maag experiment cards --table 9.2 --sims 1,10,100,1000 --games 200 --jobs 2\n"
            "    maag experiment cards --report --markdown cards.md --plots docs/")


def run_cards(args: argparse.Namespace) -> int:
    from maag.lab import cards
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    try:
        sims = [int(x) for x in args.sims.split(",") if x.strip()] if args.sims else None
        if sims is not None and any(n < 1 for n in sims):
            raise ValueError("simulation counts must be at least 1")
        pts = cards.points(args.table or list(cards.TABLES), sims)
    except ValueError as e:
        print(f"maag experiment cards: {e}", file=sys.stderr)
        return 2
    if args.games < 1 or args.jobs < 1:
        print("maag experiment cards: --games and --jobs must be at least 1", file=sys.stderr)
        return 2
    console = Console(stderr=True)
    if not args.report:
        have = cards.load(args.data)
        todo = [(p, max(0, args.games + args.games % 2 - len(have.get(p.key, [])))) for p in pts]
        total = sum(n for _, n in todo)
        console.print(f"{len(pts)} points, {total} games to play ({args.data})", highlight=False)
        # A time-weighted bar: a point's games cost about its simulations per move.
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=console) as prog:
            bar = prog.add_task("games", total=total)
            for p, n in todo:
                if n == 0:
                    continue
                prog.update(bar, description=f"{p.table} {p.series} {p.label}".replace("  ", " "))
                base = prog.tasks[bar].completed

                def on_game(done: int, total_: int, base: float = base, n: int = n) -> None:
                    prog.update(bar, completed=base + min(n, done - (total_ - n)))

                cards.run_point(p, args.games, args.data, jobs=args.jobs, seed=args.seed, on_game=on_game)
    data = cards.load(args.data)
    text = cards.markdown(data)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    else:
        Console().print(text, highlight=False, markup=False)
    if args.plots:
        for path in cards.plot(data, args.plots):
            console.print(f"wrote {path}", highlight=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run as `python -m maag.lab.cli_experiment hidden ...` (the same as `maag experiment`)."""
    parser = argparse.ArgumentParser(prog="maag")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["experiment", *(argv if argv is not None else sys.argv[1:])])
    return int(args.func(args) or 0)
