"""The state machine of a maag connection, as data.

Rules of this file:
- Everything that changes a connection's state is in TRANSITIONS; `Connection` only looks
  keys up. A missing key *is* the protocol violation (unexpected_message).
- The table does not know which side it runs on: it is keyed by the role that *sent* the
  event, so a client and a server that saw the same events agree on the state.
- Event keys are message types, plus three that are not messages: "greeting" (the
  client's first line), "fatal_error" (an `error` whose code is fatal and that names no
  game: the server closes the connection after it) and "eof" (that role closed its stream).
"""

from __future__ import annotations

from enum import Enum


class Role(Enum):
    CLIENT = "client"
    SERVER = "server"

    @property
    def peer(self) -> Role:
        return Role.SERVER if self is Role.CLIENT else Role.CLIENT


class ConnState(Enum):
    GREETING = "GREETING"  # waiting for the client's greeting line
    HELLO = "HELLO"        # framing chosen; waiting for the client's hello
    AUTH = "AUTH"          # hello sent; waiting for welcome (or an error)
    READY = "READY"        # welcomed: games, turns and pings
    CLOSED = "CLOSED"      # a side closed, or the server sent a fatal error


_GAME_FROM_CLIENT = {"act": ConnState.READY, "turn": ConnState.READY, "resign": ConnState.READY,
                     "ping": ConnState.READY}
_GAME_FROM_SERVER = {t: ConnState.READY for t in ("game_start", "your_turn", "event", "turn_events",
                                                  "result", "game_over", "error", "pong")}
_END = {"fatal_error": ConnState.CLOSED, "eof": ConnState.CLOSED}

# sender -> state -> event key -> next state
TRANSITIONS: dict[Role, dict[ConnState, dict[str, ConnState]]] = {
    Role.CLIENT: {
        ConnState.GREETING: {"greeting": ConnState.HELLO, "eof": ConnState.CLOSED},
        ConnState.HELLO: {"hello": ConnState.AUTH, "eof": ConnState.CLOSED},
        ConnState.AUTH: {"eof": ConnState.CLOSED},
        ConnState.READY: {**_GAME_FROM_CLIENT, "eof": ConnState.CLOSED},
        ConnState.CLOSED: {"eof": ConnState.CLOSED},
    },
    Role.SERVER: {
        ConnState.GREETING: dict(_END),  # only to refuse a bad greeting
        ConnState.HELLO: dict(_END),
        ConnState.AUTH: {"welcome": ConnState.READY, **_END},
        ConnState.READY: {**_GAME_FROM_SERVER, **_END},
        ConnState.CLOSED: {"eof": ConnState.CLOSED},
    },
}
