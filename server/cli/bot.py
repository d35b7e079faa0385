"""`maag bot ...`: register bots (`add`, `list`). Other parts of maag add their own `bot`
subcommands (`run`, `check`) as entry points of the group "maag.bot_commands"."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from maag.server.cli import register_group
from maag.server.cli.common import add_db_argument
from maag.server.storage.backend import redact_url, resolve_db
from maag.server.storage.base import StorageError, open_storage


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
    register_group("maag.bot_commands", bsub, level=1, local=("add", "list"))
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_add(args: argparse.Namespace) -> int:
    st = open_storage(args.db)
    try:
        token = st.add_bot(args.name, replace=args.replace)
    except StorageError as e:
        print(f"maag bot add: {e}", file=sys.stderr)
        return 1
    finally:
        st.close()
    # The token alone on standard output (TOKEN=$(maag bot add NAME) keeps working); what it
    # is and what to do with it for the person at the terminal, on standard error.
    print(token)
    what = ("a new token; the one before is revoked (a game it is playing finishes, then that "
            "connection is closed)" if args.replace else "registered")
    print(f"maag bot add: {args.name}: {what}, in {redact_url(str(resolve_db(args.db)))}.\n"
          f"  Only the token's hash is stored: keep the token now, it is not shown again. The bot "
          f"plays with it (MAAG_TOKEN=... or --token); a lost one is replaced by "
          f"`maag bot add {args.name} --replace`.", file=sys.stderr)
    return 0


def run_list(args: argparse.Namespace) -> int:
    st = open_storage(args.db)
    try:
        for b in st.list_bots():
            print(f"{b.name}\t{b.created}")
    finally:
        st.close()
    return 0
