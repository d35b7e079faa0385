"""`maag tournament`: round robin, gauntlet or Swiss among bundled agents and external bot
commands, through the real referee, resumable, with a live leaderboard and exports.

    maag tournament --bot random --bot first --bot greedy-action --games-per-pair 4 --tc 1s \\
        --map a-small --db sqlite:///cup.sqlite3 --concurrency 2 --out-html cup.html

Each pairing is played as game pairs with the same seed and the seats swapped. The schedule
lives in the database: killed at any moment and restarted with the same command, the
tournament continues where it stopped, and a finished one just prints its standings. The
tournament's name is a hash of its settings unless --name is given. The game options, time
control and policies are those of `maag serve` and `maag match`. Every game's seed derives
from a base: a secret drawn from the OS and kept in the database (the default: no bot can
compute the deals), or --seed for a reproducible tournament.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maag.server.cli.common import (
    add_db_argument,
    add_game_arguments,
    add_host_arguments,
    game_config,
    host_options,
    policy,
    setup_logging,
)
from maag.server.compete.formats import (
    FORMATS,
    BotSpec,
    Standings,
    TournamentSpec,
    forfeits_text,
    parse_bot,
    to_csv,
    to_html,
    to_json,
)
from maag.server.printable import printable
from maag.server.storage.tournaments import SpecMismatch, TournamentBusy
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # the runner (and scipy) load only when a tournament runs
    from maag.server.compete.runner import Event, TournamentRunner


def parse_kv(text: str, what: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        k, sep, v = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"bad {what} {text!r}: use key=value[,key=value...]")
        out[k.strip()] = v.strip()
    return out


def parse_sprt(text: str) -> dict[str, float]:
    kv = parse_kv(text, "--sprt")
    unknown = set(kv) - {"elo0", "elo1", "alpha", "beta"}
    if unknown or not {"elo0", "elo1"} <= set(kv):
        raise argparse.ArgumentTypeError("--sprt takes elo0=E0,elo1=E1[,alpha=A,beta=B]")
    out = {"alpha": 0.05, "beta": 0.05}
    out.update({k: float(v) for k, v in kv.items()})
    return out


def register(sub: Any) -> None:
    p = sub.add_parser("tournament", help="round robin, gauntlet or Swiss among bots (resumable)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bot", action="append", default=[], metavar="NAME[=COMMAND]", required=True,
                   help="a participant: a bundled agent by name, a submitted bot by NAME (its active "
                        "version) or NAME@VERSION, NAME=COMMAND for an external bot "
                        "(placeholders {host} {port} {connect} {token} {concurrency}), or NAME=PATH for a "
                        "bot package (a folder with maag-bot.toml, or a .tar.gz/.zip), run in the sandbox; "
                        "repeat")
    p.add_argument("--format", choices=FORMATS, default="round-robin")
    p.add_argument("--games-per-pair", type=int, default=2, metavar="N",
                   help="games per pairing (per Swiss round), even: N/2 seeds, each from both seats "
                        "(default 2)")
    p.add_argument("--rounds", type=int, default=None, help="Swiss rounds (default ceil(log2(bots)) + 1)")
    p.add_argument("--gauntlet", metavar="NAME", default=None,
                   help="the bot that plays everyone in a gauntlet (default the first --bot)")
    # --game --map --option --tc --seed --late --max-late --max-illegal --grace
    add_game_arguments(p, "1s", seed_help="base seed of the schedule, for a reproducible tournament: every "
                       "game's seed derives from it, so anyone who knows it can compute every deal (default: "
                       "a secret drawn from the OS and kept in the database; a resumed tournament keeps it)")
    p.add_argument("--deals", choices=("mirrored", "independent"), default="mirrored",
                   help="mirrored (default): each deal is played twice, once from each seat; "
                        "independent: every game its own deal (nothing for a bot that remembers "
                        "its games to recognise; more games for the same precision)")
    p.add_argument("--name", default=None, help="the tournament's name (default: a hash of its settings)")
    add_db_argument(p)
    p.add_argument("--concurrency", type=int, default=1, metavar="K", help="games played at once (default 1)")
    p.add_argument("--cluster", default=None, metavar="ADDRESS",
                   help="a Dask scheduler (tcp://HOST:8786) to spread games over, or `local` for a "
                        "LocalCluster of --concurrency workers; default: this process")
    p.add_argument("--sprt", type=parse_sprt, default=None, metavar="elo0=E0,elo1=E1[,alpha=A,beta=B]",
                   help="two bots only: stop as soon as the SPRT decides whether the first is elo1 (H1) "
                        "rather than elo0 (H0) Elo stronger than the second")
    p.add_argument("--anchor", default=None, metavar="NAME", help="rate NAME at 0 (default: mean rating 0)")
    p.add_argument("--out-csv", metavar="FILE", help="write the standings as CSV")
    p.add_argument("--out-json", metavar="FILE", help="write standings, crosstable and games as JSON")
    p.add_argument("--out-html", metavar="FILE", help="write a static HTML leaderboard")
    p.add_argument("--log-dir", metavar="DIR", help="keep each bot process's output in DIR/NAME.log")
    p.add_argument("--rating-interval", type=int, default=10, metavar="N",
                   help="line output: print the ranking every N games (default 10; 0 never)")
    p.add_argument("--strikes", default=None, metavar="KIND:N/M[,...]",
                   help="the strike policy: a bot with N verdicts of KIND (crash, memory, startup, protocol, "
                        "time, illegal, disconnect, any) among its last M games is taken out, its games not "
                        "yet played withdrawn (default crash:3/10,memory:3/10,startup:3/10,protocol:3/10; "
                        "none: off)")
    add_host_arguments(p)
    p.add_argument("--json", action="store_true",
                   help="progress lines go to stderr; print one JSON summary object on stdout")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="log the referee's and the runner's work to stderr (-vv: every message)")
    p.set_defaults(func=run)


def resolve_submitted(bots: tuple[BotSpec, ...], db_url: str) -> tuple[BotSpec, ...]:
    """`--bot NAME` or `--bot NAME@VERSION` naming a submitted bot: its active (or that)
    version, as NAME@VERSION run from its stored package; other names stay bundled agents."""
    if all(b.command is not None for b in bots):
        return bots
    from maag.server.hosting.api import resolve_bot
    from maag.server.storage.submissions import open_submission_store

    store = open_submission_store(db_url)
    try:
        out = []
        for b in bots:
            got = resolve_bot(store, b.name) if b.command is None else None
            out.append(b if got is None else BotSpec(got[0], got[1]))
        return tuple(out)
    finally:
        store.close()


def spec_from_args(args: argparse.Namespace) -> TournamentSpec:
    bots = resolve_submitted(tuple(parse_bot(b) for b in args.bot), args.db)
    extra: dict[str, Any] = {"policy": policy(args).to_dict()}
    if args.sprt is not None:
        if len(bots) != 2:
            raise ValueError("--sprt needs exactly two bots")
        extra["sprt"] = args.sprt
    if args.deals != "mirrored":  # (absent by default: the ids of earlier tournaments stay)
        extra["deals"] = args.deals
    if args.strikes is not None:  # (absent by default, as above)
        from maag.server.compete.strikes import StrikePolicy

        extra["strikes"] = str(StrikePolicy.parse(args.strikes))
    return TournamentSpec(format=args.format, bots=bots, games_per_pair=args.games_per_pair, tc=str(args.tc),
                          seed=args.seed, game=args.game,
                          config=tuple(sorted(game_config(args).items())), rounds=args.rounds,
                          gauntlet=args.gauntlet, name=args.name, extra=tuple(sorted(extra.items())))


def leaderboard(st: Standings, title: str | None = None) -> Table:
    t = Table(title=title or f"{st.tournament}: {st.games}/{st.scheduled} games")
    for col, just in (("#", "right"), ("bot", "left"), ("Elo", "right"), ("95% interval", "right"),
                      ("games", "right"), ("W-D-L", "right"), ("score", "right"), ("forfeits", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in st.table:
        lo, hi = r["elo_ci95"]
        ci = "" if lo is None or hi is None else f"[{lo:+.0f}, {hi:+.0f}]"
        elo = "" if r["elo"] is None or not r["games"] else f"{r['elo']:+.0f}"
        pct = "" if r["score_pct"] is None else f" ({r['score_pct']:.1f}%)"
        wdl = f"{r['wins']}-{r['draws']}-{r['losses']}"
        t.add_row(str(r["rank"]), r["bot"], elo, ci, str(r["games"]), wdl, f"{r['score']:g}{pct}",
                  forfeits_text(r))
    return t


def crosstable(st: Standings) -> Table:
    names = [r["bot"] for r in st.table]
    t = Table(title="crosstable (row's points / games against column)")
    t.add_column("")
    for n in names:
        t.add_column(n, justify="right")
    for a in names:
        cells = []
        for b in names:
            c = st.crosstable[a].get(b)
            cells.append("·" if a == b else f"{c['points']:g}/{c['games']:g}" if c else "")
        t.add_row(a, *cells)
    return t


RESULT_TEXT = {0: "1-0", 1: "0-1", -1: "1/2-1/2"}


class _Display:
    """cutechess-style lines (one per event) or a live rich leaderboard on a terminal."""

    def __init__(self, runner: TournamentRunner, console: Console, live: bool, interval: int) -> None:
        self.runner, self.console, self.interval = runner, console, interval
        self.live: Live | None = Live(console=console, auto_refresh=False, transient=True) if live else None
        self.started = 0
        self.last = Text("")

    def __enter__(self) -> _Display:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)

    def line(self, text: str) -> None:
        if self.live is not None:
            self.last = Text(text)
        else:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def __call__(self, e: Event) -> None:
        g = e.game
        if e.kind == "resume":
            info = e.info or {}
            self.line(f"Resuming: {info.get('adopted', 0)} finished game(s) adopted from storage, "
                      f"{info.get('released', 0)} to be replayed")
        elif e.kind == "round":
            self.line(f"Round {(e.info or {}).get('round', 0) + 1}: {e.done} of {e.total} games done")
        elif e.kind == "start" and g is not None:
            self.started += 1
            self.line(f"Started game {g.key} ({g.seat0} vs {g.seat1}, seed {g.seed})")
        elif e.kind == "finish" and g is not None:
            result = RESULT_TEXT.get(e.winner if e.winner is not None else 9, "*")
            self.line(f"Finished game {g.key} ({g.seat0} vs {g.seat1}): {result} {{{e.reason}}}  "
                      f"[{e.done}/{e.total}, stored as game {e.game_id}]")
            if self.live is None and self.interval and e.done % self.interval == 0:
                self.console.print(leaderboard(self.runner.standings()))
        elif e.kind == "retry" and g is not None:
            self.line(f"Game {g.key} ({g.seat0} vs {g.seat1}) was aborted ({e.reason}); it will be replayed")
        elif e.kind == "withdrawn":
            i = e.info or {}
            self.line(f"{i.get('bot')} struck out ({i.get('rule')}): {i.get('games')} game(s) withdrawn")
        elif e.kind == "sprt":
            i = e.info or {}
            self.line(f"SPRT: llr {i['llr']:.2f} ({i['lower']:.2f}, {i['upper']:.2f}) "
                      f"[{i['elo0']:g}, {i['elo1']:g}]: {i['decision']} accepted")
        if self.live is not None and e.kind in ("finish", "round", "start", "resume", "sprt"):
            self.live.update(Group(leaderboard(self.runner.standings()), self.last), refresh=True)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.verbose)
    err = Console(stderr=True)
    try:
        spec = spec_from_args(args)
    except (ValueError, argparse.ArgumentTypeError) as e:
        err.print(f"maag tournament: {e}", markup=False, soft_wrap=True)
        return 2
    db = args.db
    out = Console(stderr=True) if args.json else Console()
    from maag.server.compete.runner import TournamentRunner
    from maag.server.sandbox.archive import PackageError

    try:
        hosting = host_options(args)
    except ValueError as e:
        err.print(f"maag tournament: {e}", markup=False, soft_wrap=True)
        return 2
    runner = TournamentRunner(spec, db, concurrency=args.concurrency, cluster=args.cluster,
                              anchor=args.anchor, log_dir=args.log_dir, host=hosting.to_dict())
    display = _Display(runner, out, live=out.is_terminal and not args.json, interval=args.rating_interval)
    runner.on_event = display
    if not args.json:
        out.print(f"Tournament {spec.id} ({spec.format}, {len(spec.bots)} bots, {spec.games_per_pair} games "
                  f"per pairing, tc {spec.tc}) in {db}", markup=False, highlight=False)
    try:
        with display:
            st = runner.run()
    except (TournamentBusy, SpecMismatch) as e:
        err.print(f"maag tournament: {e}", markup=False, soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        err.print("maag tournament: interrupted; run the same command again to resume", soft_wrap=True)
        return 130
    except PackageError as e:  # refused as it is: running again alone would refuse it again
        err.print(f"maag tournament: {printable(str(e))}; fix the package (or the host's option it names), "
                  "then run the same command again to resume", markup=False, soft_wrap=True)
        return 2
    except Exception as e:  # a bot that keeps crashing, a database that went away, ...
        # A bot's crash names its log's end: the participant's output, shown escaped.
        err.print(f"maag tournament: {type(e).__name__}: {printable(str(e))}; run the same command again to "
                  "resume",
                  markup=False, soft_wrap=True)
        return 1
    rows = _rows(runner, db)
    for path, text in ((args.out_csv, lambda: to_csv(st)), (args.out_json, lambda: to_json(st, rows)),
                       (args.out_html, lambda: to_html(st))):
        if path:  # the folder made if missing (the docs' /var/www/html/final/ on a new machine)
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text())
    out.print(leaderboard(st))
    out.print(crosstable(st))
    if args.json:
        summary = st.summary()
        from maag.server.compete.runner import sprt_state

        res = sprt_state(spec, rows)
        if res is not None:
            summary["sprt"] = res.as_dict()
        if runner.workers:
            summary["workers"] = runner.workers
        sys.stdout.write(json.dumps(summary) + "\n")
    return 0


def _rows(runner: TournamentRunner, db: str) -> list[Any]:
    from maag.server.storage.tournaments import opened

    with opened(db) as store:
        return store.rows(runner.tid)
