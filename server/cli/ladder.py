"""`maag ladder`: a long-running ladder. Bots registered with `maag bot add NAME` connect with
their tokens whenever they like (`maag bot run AGENT --connect HOST:PORT --token T`, or any
client of docs/protocol.md); the scheduler keeps pairing the connected ones, closest ratings
first with some randomness, at most --per-bot games at once per bot, and refits the ratings
after every game. Results go to the database (--db); the leaderboard can be rewritten after
every game (--out-html, --out-csv, --out-json) for a web server to publish.

    maag ladder --db postgresql://maag@db/ladder --host 0.0.0.0 --port 7878 --tc 1s \\
        --per-bot 2 --out-html /var/www/ladder/index.html

With --web [HOST:]PORT the ladder's standings (with their intervals), its live games and
their replays are also served as web pages (docs/web.md).

`maag ladder --standings` prints the standings from the database and exits. Ctrl-C (or
SIGTERM) stops pairing, prints the ids of the games in progress and waits for them (at once
when there are none); a second Ctrl-C aborts them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import TYPE_CHECKING, Any

from maag.server.cli.common import (
    add_db_argument,
    add_game_arguments,
    add_host_arguments,
    add_service_arguments,
    add_web_arguments,
    game_config,
    host_options,
    policy,
    service_options,
    setup_logging,
    web_config,
    write_port_file,
)
from maag.server.cli.tournament import RESULT_TEXT, crosstable, leaderboard
from maag.server.compete.strikes import DEFAULT_STRIKES
from maag.server.net.server import ServerConfig
from maag.server.printable import printable
from maag.server.storage.base import open_storage
from rich.console import Console

if TYPE_CHECKING:  # the ladder (and scipy) load only when it runs
    from maag.server.compete.ladder import Ladder
    from maag.server.compete.ladder_report import LadderEvent


def register(sub: Any) -> None:
    p = sub.add_parser("ladder", help="a continuous ladder among connected bots", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", default="main", help="the ladder's name in the database (default main)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7878, help="TCP port (default 7878; 0: any free port)")
    p.add_argument("--port-file", metavar="FILE", default=None, help="write the listening port to FILE")
    add_db_argument(p)
    add_game_arguments(p, "1s")
    add_service_arguments(p)
    add_web_arguments(p)
    p.add_argument("--per-bot", type=int, default=1, metavar="K",
                   help="ladder games a bot plays at once at most (default 1; also capped by the "
                        "concurrency its connection declares)")
    p.add_argument("--spread", type=float, default=100.0, metavar="ELO",
                   help="pairing randomness: opponents weigh exp(-|Elo gap| / ELO) (default 100)")
    p.add_argument("--max-games", type=int, default=None, metavar="N",
                   help="stop after N games (default: run until interrupted)")
    p.add_argument("--anchor", default=None, metavar="NAME", help="rate NAME at 0 (default: mean rating 0)")
    p.add_argument("--out-html", metavar="FILE", help="rewrite a static HTML leaderboard after every game")
    p.add_argument("--out-csv", metavar="FILE", help="rewrite the standings as CSV after every game")
    p.add_argument("--out-json", metavar="FILE", help="rewrite the standings as JSON after every game")
    p.add_argument("--rating-interval", type=int, default=10, metavar="N",
                   help="print the ranking every N games (default 10; 0 never)")
    p.add_argument("--strikes", default=DEFAULT_STRIKES, metavar="KIND:N/M[,...]",
                   help="the strike policy: a bot with N verdicts of KIND among its last M games is "
                        f"paired no more (default {DEFAULT_STRIKES}; none: off; docs/hosting.md)")
    p.add_argument("--submitted", choices=("no", "also", "only"), default="no",
                   help="submitted bots (`maag bot submit`): their active versions play in the ladder, "
                        "hosted in the sandbox on this machine, rated per version (NAME@VERSION); also: "
                        "beside connected bots; only: without them (default no)")
    p.add_argument("--slots", type=int, default=None, metavar="K",
                   help="hosted games at once at most (default: this machine's cores; with --cluster local, "
                        "its workers; with --fleet, this member's: 0 hosts none here)")
    p.add_argument("--cluster", default=None, metavar="ADDRESS",
                   help="with --submitted: play the games between two submitted bots on a Dask scheduler "
                        "(tcp://HOST:8786), or `local` for a LocalCluster of --slots workers; each worker "
                        "fetches the packages by hash from the database and caches them")
    p.add_argument("--log-dir", default=None, metavar="DIR",
                   help="hosted bots' logs (default: a temporary folder)")
    add_host_arguments(p)
    p.add_argument("--standby", action="store_true",
                   help="if another process already runs this ladder on this database, wait and take over "
                        "when it stops or dies (without it: exit with an error); one process schedules a "
                        "ladder at a time")
    p.add_argument("--fleet", action="store_true",
                   help="one of several ladder processes on this database (PostgreSQL; on one machine, "
                        "all on one port with --reuse-port): each is a referee its bots connect to, the one "
                        "holding the ladder's lock pairs the bots of all of them (a bot plays bots connected "
                        "to any process; its seat is linked to the game's host), and another takes over "
                        "when it dies")
    p.add_argument("--standings", action="store_true", help="print the standings from the database and exit")
    p.add_argument("--json", action="store_true",
                   help="progress lines go to stderr; at the end print one JSON summary object on stdout")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log the referee's work to stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from maag.server.compete.ladder import Ladder
    from maag.server.compete.ladder_lock import LadderBusy
    from maag.server.compete.ladder_report import ladder_standings

    setup_logging(args.verbose)
    out = Console(stderr=True) if args.json else Console()
    if args.standings:
        storage = open_storage(args.db)
        try:
            st = ladder_standings(storage, args.name, anchor=args.anchor)
        finally:
            storage.close()
        _finish(args, out, st)
        return 0
    cfg = ServerConfig(host=args.host, port=args.port, game=args.game, game_config=game_config(args),
                       tc=args.tc, policy=policy(args), seed=args.seed, auto_pair=False,
                       **service_options(args))
    try:
        hosting = host_options(args)
    except ValueError as e:
        print(f"maag ladder: {e}", file=sys.stderr)
        return 2
    ladder = Ladder(args.db, cfg, name=args.name, per_bot=args.per_bot, spread=args.spread, seed=args.seed,
                    max_games=args.max_games, anchor=args.anchor, out_html=args.out_html,
                    out_csv=args.out_csv, out_json=args.out_json, strikes=args.strikes,
                    submitted=args.submitted, host_options=hosting, slots=args.slots, log_dir=args.log_dir,
                    cluster=args.cluster, standby=args.standby, fleet=args.fleet)
    ladder.on_event = _printer(ladder, out, args)
    try:
        asyncio.run(_run(ladder, args))
    except KeyboardInterrupt:
        pass
    except LadderBusy as e:
        print(f"maag ladder: {e}", file=sys.stderr, flush=True)
        return 2
    _finish(args, out, ladder.standings())
    if ladder.failed:
        print(f"maag ladder: {ladder.failed}", file=sys.stderr, flush=True)
        return 3
    return 0


async def _run(ladder: Ladder, args: argparse.Namespace) -> None:
    await ladder.start()
    wcfg = web_config(args)
    if wcfg is not None and ladder.server is not None:
        from maag.server.web.app import WebServer

        async def standings() -> dict[str, Any]:
            return ladder.standings().summary()

        web = WebServer(ladder.server, wcfg, standings=standings)
        await web.start()
        ladder.on_close.append(web.stop)
        print(f"maag ladder: web view on http://{wcfg.host}:{web.port}/", file=sys.stderr, flush=True)
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            ladder.stop()  # (first: the games paired but not begun are called off)
            print("maag ladder: stopping; " + ("handing its games over to the fleet's other processes"
                                                if ladder.fleet is not None else _waiting_for(ladder)),
                  file=sys.stderr, flush=True)
        elif main is not None:
            main.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    if args.port_file:
        write_port_file(args.port_file, ladder.port)
    try:
        await ladder.run()
    except asyncio.CancelledError:
        await ladder.close()


def _waiting_for(ladder: Ladder) -> str:
    """What a stopping ladder waits for, in words."""
    ids = ladder.in_progress()
    starting = max(0, ladder.under_way() - len(ids))  # hosted processes not started yet
    if not ids and not starting:
        return "no game in progress"
    parts = []
    if ids:
        parts.append(f"game{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))} in progress")
    if starting:
        plural = "s" if starting > 1 else ""
        parts.append(f"{starting} hosted game{plural} starting (at most --hello-timeout)")
    return f"waiting for {' and '.join(parts)} to end (again to abort them)"


def _printer(ladder: Ladder, out: Console, args: argparse.Namespace) -> Any:
    def say(text: str) -> None:
        out.print(printable(text), markup=False, highlight=False, soft_wrap=True)  # reasons can quote a bot
        out.file.flush()  # a line per event, at once, also into a log file or a pipe

    def on_event(e: LadderEvent) -> None:
        if e.kind == "standby":
            say(f"Standing by: another process runs ladder {ladder.name} on this database; "
                "taking over when it stops")
        elif e.kind == "leading":
            say(f"Taking over ladder {ladder.name}")
        elif e.kind == "listening":
            say(f"Ladder {ladder.name} listening on {ladder.config.host}:{ladder.port} "
                f"({e.games} past games, tc {ladder.config.tc}, at most {ladder.per_bot} game(s) per bot)")
        elif e.kind == "join":
            say(f"Bot {e.bot} connected")
        elif e.kind == "leave":
            say(f"Bot {e.bot} left")
        elif e.kind == "struck":
            say(f"Bot {e.bot} struck out ({e.reason}): it is paired no more")
        elif e.kind == "voided":
            say(f"Game {e.game_id} voided by the host ({e.reason}): left out of the ratings and strikes")
        elif e.kind == "pardoned":
            sent = "it is paired again" if e.bot not in ladder.struck else "it is still struck out"
            say(f"Bot {e.bot} pardoned by the host ({e.reason}): its strikes so far are cleared; {sent}")
        elif e.kind == "start" and e.seats:
            say(f"Started game {e.game_id} ({e.seats[0]} vs {e.seats[1]})")
        elif e.kind == "paired" and e.seats:
            say(f"Paired {e.seats[0]} vs {e.seats[1]} (another process referees the game)")
        elif e.kind == "finish" and e.seats:
            result = RESULT_TEXT.get(e.winner if e.winner is not None else 9, "*")
            say(f"Finished game {e.game_id} ({e.seats[0]} vs {e.seats[1]}): {result} {{{e.reason}}}")
            if args.rating_interval and ladder.finished % args.rating_interval == 0:
                out.print(leaderboard(ladder.standings(), title=f"ladder {ladder.name}: {e.games} games"))

    return on_event


def _finish(args: argparse.Namespace, out: Console, st: Any) -> None:
    out.print(leaderboard(st, title=f"ladder {st.tournament}: {st.games} games"))
    out.print(crosstable(st))
    if args.json:
        sys.stdout.write(json.dumps(st.summary()) + "\n")
