"""maag.clients: the Python SDK for writing bots that play on a maag referee.

A complete bot (it plays random legal actions, one at a time)::

    import random
    import sys

    from maag.clients import Bot, TurnResult, run_bot_blocking


    class RandomBot(Bot):
        name = "random-example"
        want_legal = True  # the server then lists the legal actions in every observation

        def choose_turn(self, observation, limit):
            return TurnResult([random.choice(observation.legal)])


    if __name__ == "__main__":
        run_bot_blocking(RandomBot, sys.argv[1], token=sys.argv[2])  # HOST:PORT TOKEN

`choose_turn` gets an `Observation` (the map of docs/protocol.md section 6, with `.legal`;
the SDK needs no C core, and a bot that wants maag's engine builds its view itself with
`maag.engine.Observation.from_json`) and a `Limit` (milliseconds left), and returns a
`TurnResult`: a whole turn, or its first part (the bot is then asked again), or
`resigned=True`. A plain `def` runs in a worker thread; an `async def` on the event loop.
Bot settings are declared as `Option`s and arrive parsed in `self.settings`.

The address may also be "unix:PATH" (a Unix socket) or "fd:N" (an already connected
socket inherited as file descriptor N, as a sandboxed bot gets it in $MAAG_CONNECT); see
`parse_address`.

`Client` is the asyncio client (several games at once: `concurrency=`), `SimpleClient` a
blocking wrapper. Errors: `BotError`, with `ServerError` (the server refused us, `.code`)
and `BotTerminatedError` (the connection or a bot process is gone) under it.

Modules (the public names of the `_` modules are re-exported here):
  _bot      what a bot author writes against: `Bot`, `GameInfo`, `Observation`, `Limit`,
            `TurnResult` (plain data from the wire)
  _client   the asyncio `Client`: connect (HOST:PORT, unix:PATH, fd:N), greet, play every
            game with a fresh `Bot`, reconnect
  _simple   `SimpleClient` and `run_bot_blocking`: the client on a background thread
  _options  `Option`: typed settings of bots and of the bundled agents
  _errors   the SDK's error tree
  js/, c/   a Node.js client and a C bot; testbots/: misbehaving bots for the server's tests
"""

from __future__ import annotations

import asyncio
from typing import Any

from ._bot import Bot, GameInfo, GameRecord, Info, Limit, Observation, TurnResult
from ._client import (
    LOGGER,
    Address,
    BotFactory,
    Client,
    ClientStats,
    FdAddress,
    StreamTransport,
    TcpAddress,
    Transport,
    UnixAddress,
    parse_address,
    run_bot,
)
from ._errors import BotError, BotTerminatedError, ServerError, exit_hint
from ._options import MANAGED_OPTIONS, Option, parse_params, parse_settings
from ._simple import SimpleClient


def run_bot_blocking(bot: type[Bot] | BotFactory, address: str | Address, *, token: str,
                     **kwargs: Any) -> ClientStats:
    """`run_bot` for scripts: connect to `address` ("HOST:PORT", "unix:PATH" or "fd:N"), play
    until the server closes."""
    return asyncio.run(run_bot(bot, address, token=token, **kwargs))


__all__ = [
    "Bot", "TurnResult", "Observation", "Limit", "GameInfo", "GameRecord", "Info",
    "Option", "MANAGED_OPTIONS", "parse_settings", "parse_params",
    "Client", "ClientStats", "SimpleClient", "Transport", "StreamTransport", "BotFactory",
    "run_bot", "run_bot_blocking", "parse_address", "Address", "TcpAddress", "UnixAddress", "FdAddress",
    "LOGGER",
    "BotError", "BotTerminatedError", "ServerError", "exit_hint",
]
