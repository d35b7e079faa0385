"""The referee's own minimal bot, for its tests, benchmarks, the bot kit's opponent and
`maag match random|first`: plays uniformly random legal actions (or the first legal one)
on the engine's copy of its observation, in any registered game. Bots for people are
written with maag.clients; bundled agents run with `maag bot run` (maag.bots).

    python -m maag.server.net.minibot --connect 127.0.0.1:7878 --token T [--agent random|first]
        [--mode act|turn] [--encoding msgpack|json] [--concurrency N] [--seed S]

`--mode act` sends one `act` per `your_turn` (the server sends a new `your_turn` while the
turn goes on); `turn` sends each whole turn as one `turn` message. Exits when the server
closes the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from collections.abc import Sequence
from typing import Any

from maag.engine import Game, State, registry
from maag.protocol import (
    Act,
    Connection,
    ConnectionClosed,
    Error,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Message,
    Result,
    Role,
    Turn,
    YourTurn,
    read_events,
)

__all__ = ["MiniBot", "main"]


class MiniBot:
    """Plays every game it is given over one connection."""

    def __init__(self, host: str, port: int, token: str, *, agent: str = "random", mode: str = "act",
                 encoding: str = "msgpack", concurrency: int = 1, seed: int | None = None,
                 name: str = "minibot", max_games: int | None = None, delay_ms: float = 0.0,
                 want_legal: bool = False, quiet: bool = False) -> None:
        self.host, self.port, self.token = host, port, token
        self.agent, self.mode, self.encoding = agent, mode, encoding
        self.concurrency, self.name = concurrency, name
        self.rng = random.Random(seed)
        self.conn = Connection(Role.CLIENT)
        self.games: dict[str, Game] = {}
        self.states: dict[str, State] = {}
        self.finished = 0
        self.max_games = max_games
        self.errors: list[Message] = []
        self._writer: asyncio.StreamWriter | None = None
        self.delay_ms = delay_ms
        self.want_legal = want_legal
        self.quiet = quiet  # no game_over lines on stdout (the bot kit's opponent)

    def _send(self, msg: Message | Greeting) -> None:
        assert self._writer is not None
        self._writer.write(self.conn.send(msg))

    def _choose(self, st: State) -> dict[str, Any]:
        legal = st.legal_actions()
        a = legal[0] if self.agent == "first" or len(legal) == 1 else self.rng.choice(legal)
        return a.to_dict()

    def _play(self, gid: str) -> None:
        st = self.states.get(gid)
        if st is None or self._writer is None or self._writer.is_closing():
            return
        if self.mode == "turn":
            plan = []
            while True:
                a = self._choose(st)
                ended = st.game.vt.is_end_turn(st.game.action(a).code)
                st.apply(a)
                plan.append(a)
                if ended or st.is_terminal:
                    break
            self._send(Turn(game_id=gid, actions=plan))
        else:
            self._send(Act(game_id=gid, action=self._choose(st)))

    def close(self) -> None:
        """Close the connection (run() then returns)."""
        if self._writer is not None and not self._writer.is_closing():
            self._writer.close()

    async def run(self) -> int:
        reader, self._writer = await asyncio.open_connection(self.host, self.port)
        self._send(Greeting(encoding=self.encoding))
        self._send(Hello(name=self.name, token=self.token, games=registry.names(),
                         concurrency=self.concurrency, want_legal=self.want_legal))
        async for ev in read_events(reader, self.conn):
            if isinstance(ev, ConnectionClosed):
                self._writer.close()
                return 0
            self._on(ev)
            if self.max_games is not None and self.finished >= self.max_games:
                self._writer.close()
                return 0
        return 0

    def _on(self, ev: Any) -> None:
        if isinstance(ev, GameStart):
            self.games[ev.game_id] = Game(ev.game, ev.config)
        elif isinstance(ev, YourTurn):
            self.states[ev.game_id] = self.games[ev.game_id].state_from_json(ev.observation)
            if not self.delay_ms:
                self._play(ev.game_id)
            else:
                asyncio.get_running_loop().call_later(self.delay_ms / 1000, self._play, ev.game_id)
        elif isinstance(ev, Result):
            if ev.error is not None:
                self.errors.append(ev)
        elif isinstance(ev, GameOver):
            self.games.pop(ev.game_id, None)
            self.states.pop(ev.game_id, None)
            self.finished += 1
            if not self.quiet:
                print(f"game_over {ev.game_id} {ev.winner} {ev.reason} {ev.replay_id}", flush=True)
        elif isinstance(ev, Error):
            self.errors.append(ev)
            print(f"minibot: error {ev.code}: {ev.message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m maag.server.net.minibot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--connect", required=True, metavar="HOST:PORT")
    p.add_argument("--token", default=None, help="the bot's token (default: $MAAG_TOKEN)")
    p.add_argument("--agent", choices=("random", "first"), default="random",
                   help="uniformly random legal actions, or always the first legal one")
    p.add_argument("--mode", choices=("act", "turn"), default="act")
    p.add_argument("--encoding", choices=("msgpack", "json"), default="msgpack")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--name", default="minibot")
    p.add_argument("--delay", type=float, default=0.0, metavar="MS", help="wait this long before each answer")
    p.add_argument("--want-legal", action="store_true", help="ask for the legal actions in every your_turn")
    args = p.parse_args(argv)
    token = args.token or os.environ.get("MAAG_TOKEN")
    if not token:
        p.error("no token: set MAAG_TOKEN (or pass --token)")
    host, _, port = args.connect.rpartition(":")
    bot = MiniBot(host or "127.0.0.1", int(port), token, agent=args.agent, mode=args.mode,
                  encoding=args.encoding, concurrency=args.concurrency, seed=args.seed, name=args.name,
                  delay_ms=args.delay, want_legal=args.want_legal)
    try:
        return asyncio.run(bot.run())
    except (ConnectionError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
