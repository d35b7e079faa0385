"""`maag bot ...`: register bots (`add`, `list`). Other modules add their own `bot`
subcommands (`run`, `check`) through `BOT_SUBCOMMANDS`."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from maag.server.storage import StorageError, default_db_path, open_storage

# Functions that add subcommands to `maag bot`'s subparsers, given as "module:function";
# a module that is not installed (yet) is skipped.
BOT_SUBCOMMANDS: list[str] = ["maag.clients.cli:register_bot"]


def add_db_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH|URL", default=None,
                   help="database of bots, games and replays: an SQLite file (PATH or sqlite:///PATH) or "
                        f"postgresql://USER:PASSWORD@HOST:PORT/DB (default: $MAAG_DB or {default_db_path()})")


def register(sub: Any) -> None:
    p = sub.add_parser("bot", help="bots: register them (add, list), run and check them",
                       description=__doc__)
    bsub = p.add_subparsers(dest="bot_command", metavar="WHAT")
    a = bsub.add_parser("add", help="register a bot and print its token (shown only once)",
                        description="Register a bot under NAME and print a new token. Only a hash of "
                                    "the token is stored: keep the printed token, the server cannot show "
                                    "it again.")
    a.add_argument("name")
    a.add_argument("--replace", action="store_true",
                   help="issue a new token for an existing bot (revokes the old one)")
    add_db_argument(a)
    a.set_defaults(func=run_add)
    ls = bsub.add_parser("list", help="list registered bots")
    add_db_argument(ls)
    ls.set_defaults(func=run_list)
    for spec in BOT_SUBCOMMANDS:
        mod_name, _, fn_name = spec.partition(":")
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        fn: Callable[[Any], None] | None = getattr(mod, fn_name, None)
        if fn is not None:
            fn(bsub)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_add(args: argparse.Namespace) -> int:
    st = open_storage(args.db)
    try:
        token = st.add_bot(args.name, replace=args.replace)
    except StorageError as e:
        print(f"maag bot add: {e}")
        return 1
    finally:
        st.close()
    print(token)
    return 0


def run_list(args: argparse.Namespace) -> int:
    st = open_storage(args.db)
    try:
        for b in st.list_bots():
            print(f"{b.name}\t{b.created}")
    finally:
        st.close()
    return 0
