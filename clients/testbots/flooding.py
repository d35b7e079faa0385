"""A bot that floods: after `welcome` it sends pings as fast as the socket takes them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RawBot, arguments, log  # noqa: E402
from maag.protocol import Ping, Welcome  # noqa: E402


def main() -> int:
    args = arguments(__doc__, extra=[("--count", {"type": int, "default": 1_000_000,
                                                  "help": "pings to send at most"})])
    bot = RawBot(args.address, args.token, args.name or "flooding", args.encoding)
    first = bot.recv()
    if not isinstance(first, Welcome):
        log("flooding", f"no welcome: {first!r}")
        return 1
    try:
        for i in range(args.count):
            bot.send(Ping(id=i))
    except OSError:
        pass  # the server closed the connection
    while bot.recv() is not None:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
