"""maag.protocol: the wire protocol of maag, sans-IO (bytes in, events out; no sockets).

    >>> from maag.protocol import Connection, Role, Greeting, Hello, NEED_DATA
    >>> client, server = Connection(Role.CLIENT), Connection(Role.SERVER)
    >>> wire = client.send(Greeting(encoding="json"))
    >>> wire += client.send(Hello(name="bob", token="t0k", games=["heroes"]))
    >>> server.receive_data(wire)
    >>> server.next_event()
    Greeting(encoding='json', version=2)
    >>> server.next_event()
    Hello(name='bob', token='t0k', games=('heroes',), concurrency=1, want_legal=False)
    >>> server.next_event() is NEED_DATA
    True

The normative description is docs/protocol.md.

Modules (the public names of the `_` modules are re-exported here):
  _framing     the greeting line and the two framings (length-prefixed msgpack, JSON lines)
  _messages    one validated frozen dataclass per message type, `to_wire` / `from_wire`
  _packed      `Packed`: a field its sender already holds as msgpack (the referee's
               observations), copied into the frame
  _plain       what a seat sends in a game and is told back, as the referee reads and
               writes it: `Play` (every act, turn, resignation), `Played` and `Refusal`
               (what a play did, as data), `Ended` (a game's end), `Notice` (a
               seat gone), `Opening` (a start, a seat back), `Writer` (a
               connection's replies to them, from templates on msgpack), `read_plain`,
               `Items`
  _state       the connection's state machine, as a table of transitions
  _connection  `Connection`: bytes in, events out (sans-IO), and the client read loop
               `read_events`
  _errors      every error code of the protocol and the exceptions that carry them
  schema       the JSON Schema of the messages, generated from their field rules
"""

from ._connection import (
    DEFAULT_MAX_FRAME,
    NEED_DATA,
    Connection,
    ConnectionClosed,
    Event,
    Sentinel,
    event_key,
    read_events,
)
from ._errors import FATAL, ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from ._framing import ENCODINGS, MAX_GREETING, Greeting
from ._messages import (
    CLIENT_MESSAGES,
    EVENTS_MODES,
    MAX_CONCURRENCY,
    MAX_DEPTH,
    MAX_GAMES,
    MAX_ID,
    MAX_INFO,
    MAX_INFO_TEXT,
    MAX_NAME,
    MAX_TEXT,
    MAX_TOKEN,
    MAX_TURN_ACTIONS,
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    SERVER_MESSAGES,
    SUPPORTED_VERSIONS,
    Act,
    Error,
    GameEvent,
    GameOver,
    GameStart,
    Hello,
    Message,
    Ping,
    Pong,
    Resign,
    Result,
    Turn,
    TurnEvents,
    Welcome,
    YourTurn,
    check_built_messages,
    is_action,
    message_from_dict,
    message_from_wire,
)
from ._packed import Packed, plain
from ._plain import (
    ActionMaps,
    Ended,
    Items,
    Notice,
    Opening,
    Play,
    Played,
    Prompter,
    Refusal,
    Writer,
    read_plain,
)
from ._state import TRANSITIONS, ConnState, Role

__all__ = [
    "Connection", "Role", "ConnState", "NEED_DATA", "Sentinel", "ConnectionClosed", "Event", "event_key",
    "TRANSITIONS", "DEFAULT_MAX_FRAME", "MAX_GREETING", "ENCODINGS", "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS", "EVENTS_MODES",
    "ProtocolError", "LocalProtocolError", "RemoteProtocolError", "ErrorCode", "FATAL",
    "Greeting", "Message", "Hello", "Act", "Turn", "Resign", "Ping",
    "Welcome", "GameStart", "YourTurn", "GameEvent", "TurnEvents", "Result", "GameOver", "Error", "Pong",
    "CLIENT_MESSAGES", "SERVER_MESSAGES", "MESSAGE_TYPES", "message_from_wire", "message_from_dict",
    "check_built_messages", "is_action", "read_events", "Packed", "plain",
    "Play", "Played", "Refusal", "Ended", "Notice", "Opening", "Writer", "ActionMaps", "Prompter",
    "read_plain", "Items",
    "MAX_NAME", "MAX_TOKEN", "MAX_ID", "MAX_TEXT", "MAX_GAMES", "MAX_CONCURRENCY", "MAX_TURN_ACTIONS",
    "MAX_DEPTH", "MAX_INFO", "MAX_INFO_TEXT",
]
