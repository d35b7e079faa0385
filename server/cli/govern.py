"""`maag game` and `maag bot pardon`: the host governs its competition (docs/competitions.md,
"Governing a competition"). Each ruling is recorded in the database with who made it, when
and why (maag.server.storage.rulings).

    maag game show 57                                   # a game, its result and any ruling on it
    maag game void 57 --why "the host's OOM killer took bob's process"
    maag game rulings [--bot NAME]                      # every ruling, oldest first
    maag bot pardon bob --why "strikes caused by the host's outage"
    maag host add ann                                   # a host account for the web view: its token

A voided game is left out of every rating (ladder and tournament standings, the bot page's
history) and of the strike policy's histories; a pardon clears a bot's strike history up to
now, and a running ladder lets a struck-out bot play again within seconds. On the web view a
host signs in with its token (`#/host`) and voids a game from its replay page and pardons a
bot from its page; the ruling is recorded under the host account's name.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
from collections.abc import Callable
from typing import Any

from maag.server.cli.common import add_db_argument
from maag.server.printable import printable
from maag.server.storage.base import StorageError, open_storage


def _default_who() -> str:
    """Who rules, unless --by says: the person behind sudo, else this account."""
    try:
        return os.environ.get("SUDO_USER") or getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def _by(p: argparse.ArgumentParser) -> None:
    p.add_argument("--why", required=True, metavar="TEXT", help="why (kept with the ruling)")
    p.add_argument("--by", default=None, metavar="NAME",
                   help="who rules (kept with the ruling; default: the user running the command)")


def register(sub: Any) -> None:
    p = sub.add_parser("game", help="a stored game: show it, void it; the host's rulings",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    gsub = p.add_subparsers(dest="game_command", metavar="WHAT")
    s = gsub.add_parser("show", help="a game's seats, result, verdict and the rulings on it")
    s.add_argument("id", type=int)
    s.add_argument("--json", action="store_true", help="one JSON object")
    add_db_argument(s)
    s.set_defaults(func=run_show)
    v = gsub.add_parser("void", help="void a finished game: no rating and no strike counts it",
                        description="Void a finished game: it is left out of every rating and strike "
                                    "history (its result and replay stay, for the record).")
    v.add_argument("id", type=int)
    _by(v)
    add_db_argument(v)
    v.set_defaults(func=run_void)
    r = gsub.add_parser("rulings", help="every void and pardon, with who, when and why")
    r.add_argument("--bot", default=None, help="only those about this bot")
    r.add_argument("--json", action="store_true", help="one JSON array")
    add_db_argument(r)
    r.set_defaults(func=run_rulings)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def register_pardon(sub: Any) -> None:
    """`maag bot pardon` (an entry point of "maag.bot_commands")."""
    p = sub.add_parser("pardon", help="clear a bot's strike history up to now (a struck-out bot plays again)",
                       description="Clear NAME's strike history up to now: the verdicts of its games so far "
                                   "count towards no strike. A running ladder lets it play again within "
                                   "seconds.")
    p.add_argument("name", help="the bot as it plays (NAME, or NAME@VERSION for a hosted version)")
    _by(p)
    add_db_argument(p)
    p.set_defaults(func=run_pardon)


def register_host(sub: Any) -> None:
    """`maag host add`: the host's accounts that may rule from the web view."""
    p = sub.add_parser("host", help="the host's accounts for ruling from the web view (void, pardon)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    hsub = p.add_subparsers(dest="host_command", metavar="WHAT")
    a = hsub.add_parser("add", help="a host account: prints its token (only its hash is stored)")
    a.add_argument("name", help="the name rulings made with it are recorded under")
    a.add_argument("--replace", action="store_true", help="issue a new token for an existing account")
    add_db_argument(a)
    a.set_defaults(func=run_host_add)
    ls = hsub.add_parser("list", help="the host accounts")
    add_db_argument(ls)
    ls.set_defaults(func=run_host_list)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_host_add(args: argparse.Namespace) -> int:
    import sys

    from maag.server.storage.rulings import add_host

    st = open_storage(args.db)
    try:
        token = add_host(st, args.name, replace=args.replace)
    except StorageError as e:
        print(f"maag host add: {e}", file=sys.stderr)
        return 1
    finally:
        st.close()
    print(f"host {args.name}: sign in on the web view's #/host page with the token below (shown once; "
          "`maag host add NAME --replace` issues a new one)", file=sys.stderr)
    print(token)
    return 0


def run_host_list(args: argparse.Namespace) -> int:
    from maag.server.storage.rulings import list_hosts

    st = open_storage(args.db)
    try:
        for name in list_hosts(st):
            print(name)
    finally:
        st.close()
    return 0


def run_show(args: argparse.Namespace) -> int:
    from maag.server.storage.rulings import list_rulings

    st = open_storage(args.db)
    try:
        g = st.get_game(args.id)
        rulings = list_rulings(st, game_id=args.id) if g is not None else []
        replay = st.get_replay(args.id) if g is not None and g.status == "aborted" else None
        abort = (replay or {}).get("tags", {}).get("Abort")  # why it was aborted (e.g. killed from outside)
    finally:
        st.close()
    if g is None:
        print(f"maag game show: there is no game {args.id}")
        return 1
    if args.json:
        print(json.dumps({"id": g.id, "game": g.game, "seats": list(g.seats), "match_id": g.match_id,
                          "status": g.status, "winner": g.winner, "reason": g.reason, "plies": g.plies,
                          "created": g.created, "finished": g.finished, "verdict": g.verdict,
                          "abort": abort, "rulings": [r.to_dict() for r in rulings]}))
        return 0
    result = {0: "1-0", 1: "0-1", -1: "1/2-1/2"}.get(g.winner if g.winner is not None else 9, "*")
    print(f"game {g.id} ({g.game}): {g.seats[0]} vs {g.seats[1]}, {g.status}"
          + (f", {result} {{{g.reason}}} in {g.plies} plies" if g.reason else "")
          + (f", match {g.match_id}" if g.match_id else ""))
    if g.verdict:
        # A verdict's detail can quote what the bot sent: shown escaped.
        print(printable(f"  verdict: seat {g.verdict.get('seat')} {g.verdict.get('kind')}: "
                        f"{g.verdict.get('detail')}"))
    if abort:
        print(f"  aborted: {abort}")
    for r in rulings:
        print(f"  {r.describe()}")
    return 0


def run_void(args: argparse.Namespace) -> int:
    from maag.server.storage.rulings import void_game

    return _rule("maag game void", lambda st: void_game(st, args.id, args.by or _default_who(), args.why),
                 args.db)


def run_pardon(args: argparse.Namespace) -> int:
    from maag.server.storage.rulings import pardon_bot

    return _rule("maag bot pardon", lambda st: pardon_bot(st, args.name, args.by or _default_who(), args.why),
                 args.db)


def _rule(command: str, make: Callable[[Any], Any], db: Any) -> int:
    """Record one ruling (`make` on the open storage) and print it; a refused one, with why."""
    st = open_storage(db)
    try:
        r = make(st)
    except StorageError as e:
        print(f"{command}: {e}")
        return 1
    finally:
        st.close()
    print(r.describe())
    return 0


def run_rulings(args: argparse.Namespace) -> int:
    from maag.server.storage.rulings import list_rulings

    st = open_storage(args.db)
    try:
        rulings = list_rulings(st, bot=args.bot)
    finally:
        st.close()
    if args.json:
        print(json.dumps([r.to_dict() for r in rulings]))
    else:
        for r in rulings:
            print(r.describe())
    return 0
