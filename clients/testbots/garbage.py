"""A bot that sends what is not the protocol (--mode bytes, json, field, unknown, greeting)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RawBot, arguments, log  # noqa: E402
from maag.protocol import PROTOCOL_VERSION, Welcome  # noqa: E402

# (In the version RawBot greets with: only the field named is wrong.)
PAYLOADS = {
    "json": b"{this is not json}\n",
    "field": b'{"type": "act", "v": %d, "game_id": 17, "action": {"type": "end_turn"}}\n' % PROTOCOL_VERSION,
    "unknown": b'{"type": "teleport_me", "v": %d}\n' % PROTOCOL_VERSION,
}


def main() -> int:
    modes = ["bytes", "json", "field", "unknown", "greeting"]
    args = arguments(__doc__, extra=[("--mode", {"default": "bytes", "choices": modes})])
    name = args.name or "garbage"
    if args.mode == "greeting":
        bot = RawBot(args.address, args.token, name, greet=False)
        bot.sock.sendall(b"HELLO THERE\n")
    else:
        bot = RawBot(args.address, args.token, name, "json")
        first = bot.recv()
        if not isinstance(first, Welcome):
            log(name, f"no welcome: {first!r}")
            return 1
        junk = os.urandom(256).replace(b"\n", b"") + b"\n"  # one line of random bytes
        bot.sock.sendall(junk if args.mode == "bytes" else PAYLOADS[args.mode])
    # Read (raw: the protocol connection would reject the server's reply to a bad greeting)
    # until the server closes the connection.
    while True:
        try:
            data = bot.sock.recv(65536)
        except OSError:
            break
        if not data:
            break
        sys.stdout.write(data.decode("utf-8", "replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
