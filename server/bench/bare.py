"""The bare exchange of `maag bench server`: the least an asyncio server can spend on a bot's
message, the yardstick the referee's CPU per message is compared with in the same run.

A process that speaks just enough of the protocol for the bench's bots (the greeting, a
`welcome`, one `game_start`), then answers every frame it receives by decoding it (msgpack)
and writing one ready-made `your_turn`: a real mid-game heroes observation with its legal
actions, encoded once when the process starts. No referee, no validation, no clock: the
cost of an asyncio server reading, decoding and answering a frame of this size, on the same
event loop the referee runs on (uvloop when it is installed).

With `--events`, the two-write exchange: the connections are paired in the order they say
hello, and each frame is also answered with an action `event` to the other connection of
its pair, in a write of its own. That is the least a referee must do for a bot's `act` (read
it; write the mover's reply; write the opponent's event: two sockets, two writes) and so the
floor under its CPU per act, before any rules, clocks or storage (`maag bench server --floor`).

Run as `python -m maag.server.bench.bare PORT_FILE [--events]`; it writes its port to PORT_FILE.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import msgpack

__all__ = ["sample_messages", "main"]


def sample_messages(plies: int = 40, seed: int = 3) -> tuple[dict[str, Any], dict[str, Any]]:
    """A `game_start` and a mid-game `your_turn` (observation and legal actions) of a heroes
    game played `plies` random actions in, as the referee sends them (game_id "1")."""
    from maag.server.referee.session import GameSession

    s = GameSession("1", "heroes", ("a", "b"), want_legal=(True, True), seed=seed)
    outs = s.start(0.0)
    start = outs[0].msg.to_wire()
    rng = random.Random(seed)
    turn = outs[-1].msg.to_wire()
    for _ in range(plies):
        if s.finished:
            break
        for o in s.submit(s.to_move, [rng.choice(turn["legal"])], 0.0):
            if o.msg.TYPE == "your_turn":
                turn = o.msg.to_wire()
    return start, turn


def _frame(msg: dict[str, Any]) -> bytes:
    body = msgpack.packb(msg, use_bin_type=True)
    return len(body).to_bytes(4, "big") + body


class _Bare(asyncio.Protocol):
    def __init__(self, start: dict[str, Any], turn: dict[str, Any], pairs: list[_Bare] | None) -> None:
        self.start, self.turn = start, turn
        self.buf = bytearray()
        self.greeted = False
        self.answer = b""
        self.event = b""  # (the two-write exchange) the event this connection is sent
        self.pairs = pairs  # (the two-write exchange) every connection, in the order of their hello
        self.slot = -1  # (the two-write exchange) this connection's place in `pairs`
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (uvloop's are no asyncio.Transport)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.greeted:
            end = buf.find(b"\n")
            if end < 0:
                return
            del buf[:end + 1]
            self.greeted = True
        out = []
        events = 0
        while len(buf) >= 4:
            n = int.from_bytes(buf[:4], "big")
            if len(buf) < 4 + n:
                break
            msg = msgpack.unpackb(bytes(buf[4:4 + n]), raw=False)
            del buf[:4 + n]
            if msg.get("type") == "hello":
                gid = str(id(self))
                out.append(_frame({"type": "welcome", "v": 1, "bot": "bench", "server": "bare",
                                   "max_frame": 1 << 20, "max_rate": 0}))
                out.append(_frame({**self.start, "game_id": gid}))
                self.answer = _frame({**self.turn, "game_id": gid})
                self.event = _frame({"type": "event", "v": 1, "game_id": gid, "seat": 2, "kind": "action",
                                     "action": self.turn["legal"][0]})
                if self.pairs is not None:
                    self.slot = len(self.pairs)
                    self.pairs.append(self)
            else:
                events += 1
            out.append(self.answer)
        if out and self.transport is not None:
            self.transport.write(b"".join(out))
        other = self._other() if events else None
        if other is not None and other.transport is not None:
            other.transport.write(other.event * events)

    def _other(self) -> _Bare | None:
        """The other connection of this one's pair (the two-write exchange), if it has come."""
        if self.pairs is None or self.slot < 0:
            return None
        i = self.slot ^ 1
        return self.pairs[i] if i < len(self.pairs) else None

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def _serve(port_file: Path, events: bool) -> None:
    start, turn = sample_messages()
    loop = asyncio.get_running_loop()
    pairs: list[_Bare] | None = [] if events else None
    server = await loop.create_server(lambda: _Bare(start, turn, pairs), "127.0.0.1", 0)
    port_file.write_text(str(server.sockets[0].getsockname()[1]))
    await server.serve_forever()


def main(argv: list[str]) -> int:
    from maag.server.net.loop import run

    run(_serve(Path(argv[0]), "--events" in argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
