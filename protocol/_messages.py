"""The messages of the maag wire protocol: one frozen dataclass per `type`, validated on
construction, with `to_wire()` (a plain map) and `from_wire(map)`.

Building a message with a bad field raises LocalProtocolError; decoding a bad map with
`from_wire` raises RemoteProtocolError. Both carry the wire error code (`missing_field`,
`bad_field`, ...) and the name of the offending field. The schema version is not a
field of the classes: `to_wire` adds `"v": PROTOCOL_VERSION` and `from_wire` checks it.
Seats are numbered 1 and 2, as the player numbers of the games' observations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, TypeVar

from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError

PROTOCOL_VERSION = 1

# Size limits of single fields (characters or items). Frames are limited by Connection.
MAX_NAME = 64          # bot, server and game names; reasons; kinds
MAX_TOKEN = 256        # hello.token
MAX_ID = 64            # game_id, replay_id, ping id (as text)
MAX_TEXT = 2000        # error and result messages
MAX_GAMES = 32         # hello.games entries
MAX_CONCURRENCY = 1024  # hello.concurrency
MAX_TURN_ACTIONS = 1000  # turn.actions entries
MAX_DEPTH = 32         # nesting of payload maps and lists (observation, config, actions)

_M = TypeVar("_M", bound="Message")


def _fail(msg: Message | type[Message], field: str, text: str) -> LocalProtocolError:
    return LocalProtocolError(ErrorCode.BAD_FIELD, f"{msg.TYPE}.{field} {text}", field=field)


def _str(msg: Message, field: str, *, max_len: int, min_len: int = 1, optional: bool = False) -> None:
    v = getattr(msg, field)
    if v is None and optional:
        return
    if not isinstance(v, str):
        raise _fail(msg, field, f"must be a string, not {_kind(v)}")
    if not min_len <= len(v) <= max_len:
        raise _fail(msg, field, f"must have {min_len} to {max_len} characters, not {len(v)}")


def _int(msg: Message, field: str, *, lo: int, hi: int, optional: bool = False) -> None:
    v = getattr(msg, field)
    if v is None and optional:
        return
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(msg, field, f"must be an integer, not {_kind(v)}")
    if not lo <= v <= hi:
        raise _fail(msg, field, f"must be in {lo}..{hi}, not {v}")


def _bool(msg: Message, field: str, *, optional: bool = False) -> None:
    v = getattr(msg, field)
    if v is None and optional:
        return
    if not isinstance(v, bool):
        raise _fail(msg, field, f"must be true or false, not {_kind(v)}")


def _seat(msg: Message, field: str, *, optional: bool = False) -> None:
    v = getattr(msg, field)
    if v is None and optional:
        return
    if isinstance(v, bool) or v not in (1, 2):
        raise _fail(msg, field, f"must be 1 or 2, not {v!r}")


def _kind(v: Any) -> str:
    return {type(None): "null", bool: "a boolean", int: "an integer", float: "a number",
            str: "a string", list: "a list", tuple: "a list", dict: "a map"}.get(type(v), type(v).__name__)


def _plain(v: Any, depth: int = 0) -> bool:
    """True if `v` is JSON data: null, booleans, 64-bit integers, finite numbers, strings,
    lists, maps with string keys, at most MAX_DEPTH deep (so either framing can carry it).
    Every your_turn's observation passes through here, so the common types are tested by
    exact type first, with plain loops (several times faster than isinstance chains)."""
    t = type(v)
    if t is str or t is bool or v is None:
        return True
    if t is int:
        return -(2**63) <= v < 2**64  # what msgpack can carry
    if t is float:
        return math.isfinite(v)
    if depth >= MAX_DEPTH:
        return False
    if t is list or t is tuple:
        for x in v:
            tx = type(x)
            if tx is str or tx is bool or (tx is int and -(2**63) <= x < 2**64):
                continue
            if not _plain(x, depth + 1):
                return False
        return True
    if t is dict:
        for k, x in v.items():
            if type(k) is not str and not isinstance(k, str):
                return False
            tx = type(x)
            if tx is str or tx is bool or (tx is int and -(2**63) <= x < 2**64):
                continue
            if not _plain(x, depth + 1):
                return False
        return True
    return _plain_subclass(v, depth)


def _plain_subclass(v: Any, depth: int) -> bool:
    """_plain for subclasses of the JSON types (an IntEnum, a str subclass, an OrderedDict)."""
    if isinstance(v, (bool, str)):
        return True
    if isinstance(v, int):
        return -(2**63) <= v < 2**64
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, (list, tuple)):
        return all(_plain(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x, depth + 1) for k, x in v.items())
    return False


def _map(msg: Message, field: str, *, optional: bool = False) -> None:
    v = getattr(msg, field)
    if v is None and optional:
        return
    if not isinstance(v, dict):
        raise _fail(msg, field, f"must be a map, not {_kind(v)}")
    if not _plain(v):
        raise _fail(msg, field, "must hold only JSON data (no binary, NaN or deep nesting)")


def _action(msg: Message, field: str, v: Any) -> None:
    if not isinstance(v, dict):
        raise _fail(msg, field, f"must be an action map, not {_kind(v)}")
    if not isinstance(v.get("type"), str):
        raise _fail(msg, field, "must be an action map with a string 'type'")
    if not _plain(v):
        raise _fail(msg, field, "must hold only JSON data")


def _actions(msg: Message, field: str, *, min_n: int, max_n: int, optional: bool = False) -> None:
    v = getattr(msg, field)
    if v is None and optional:
        return
    if isinstance(v, (str, bytes, dict)) or not isinstance(v, Sequence):
        raise _fail(msg, field, f"must be a list of action maps, not {_kind(v)}")
    if not min_n <= len(v) <= max_n:
        raise _fail(msg, field, f"must have {min_n} to {max_n} actions, not {len(v)}")
    for a in v:
        _action(msg, field, a)
    object.__setattr__(msg, field, tuple(v))


def _groups(msg: Message, field: str) -> None:
    """None, or a list of group maps, each with `options`: a list of maps with `actions`, a
    list of action maps (other keys are the game's)."""
    v = getattr(msg, field)
    if v is None:
        return
    if isinstance(v, (str, bytes, dict)) or not isinstance(v, Sequence):
        raise _fail(msg, field, f"must be a list of group maps, not {_kind(v)}")
    for g in v:
        opts = g.get("options") if isinstance(g, dict) else None
        if isinstance(opts, (str, bytes, dict)) or not isinstance(opts, Sequence):
            raise _fail(msg, field, "must hold group maps with a list of 'options'")
        for o in opts:
            acts = o.get("actions") if isinstance(o, dict) else None
            if isinstance(acts, (str, bytes, dict)) or not isinstance(acts, Sequence):
                raise _fail(msg, field, "must hold options that are maps with a list of 'actions'")
            for a in acts:
                _action(msg, field, a)
        if not _plain(g):
            raise _fail(msg, field, "must hold only JSON data")
    object.__setattr__(msg, field, tuple(v))


def _code(msg: Message, field: str, *, optional: bool = False) -> None:
    """An error code: any short string (codes may be added later); ErrorCode members are
    stored as their plain string value."""
    _str(msg, field, max_len=MAX_NAME, optional=optional)
    v = getattr(msg, field)
    if isinstance(v, ErrorCode):
        object.__setattr__(msg, field, v.value)


def _id(msg: Message, field: str) -> None:
    v = getattr(msg, field)
    if v is None or (isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**53):
        return
    if isinstance(v, str) and len(v) <= MAX_ID:
        return
    raise _fail(msg, field, "must be null, a string or an integer")


class Message:
    """Base of all messages. `TYPE` is the wire `type`; `SENDER` is "client" or "server"."""

    __slots__ = ()
    TYPE: ClassVar[str]
    SENDER: ClassVar[str]

    def to_wire(self) -> dict[str, Any]:
        """The message as a plain map: `type`, `v`, then every field (tuples become lists);
        an optional field (one with a default) is left out when it is None."""
        out: dict[str, Any] = {"type": self.TYPE, "v": PROTOCOL_VERSION}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if v is None and f.default is not MISSING:
                continue
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_wire(cls: type[_M], data: Mapping[str, Any]) -> _M:
        """Build the message from a decoded map (with `type` and `v` already checked or
        absent). Raises RemoteProtocolError: missing_field or bad_field naming the field."""
        names = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
        kwargs = {}
        for key, value in data.items():
            if key in ("type", "v"):
                continue
            if key not in names:
                raise RemoteProtocolError(ErrorCode.BAD_FIELD, f"{cls.TYPE} has no field {key!r}",
                                          field=str(key))
            kwargs[key] = value
        for name, f in names.items():
            if name not in kwargs and f.default is MISSING and f.default_factory is MISSING:
                raise RemoteProtocolError(ErrorCode.MISSING_FIELD, f"{cls.TYPE} needs field {name!r}",
                                          field=name)
        try:
            return cls(**kwargs)
        except LocalProtocolError as e:
            raise RemoteProtocolError(e.code, e.message, field=e.field) from None


_dc = dataclass(frozen=True, slots=True, kw_only=True)


# ---- client messages ------------------------------------------------------------------------

@_dc
class Hello(Message):
    """First message of the client: who it is and what it can play.

    name: the bot's display name (1-64 characters).
    token: the secret the server issued for this bot (`maag bot add`).
    games: names of the games the bot can play, e.g. ["heroes"].
    concurrency: how many games the bot will play at once (default 1).
    want_legal: ask for the list of legal actions in every `your_turn` (default false).
    want_groups: true asks for the game's grouped legal actions in every `your_turn` (absent,
        null or false: none; only games with an action abstraction have them: conquest's §8
        decisions). Absent by default, so that a hello stays what older servers read.
    max_games: the most games the bot will play on this connection (it leaves after them);
        the referee then pairs it no more. Absent or null: no limit.
    """

    TYPE: ClassVar[str] = "hello"
    SENDER: ClassVar[str] = "client"
    name: str
    token: str
    games: tuple[str, ...]
    concurrency: int = 1
    want_legal: bool = False
    max_games: int | None = None
    want_groups: bool | None = None

    def __post_init__(self) -> None:
        _str(self, "name", max_len=MAX_NAME)
        _str(self, "token", max_len=MAX_TOKEN)
        g = self.games
        if isinstance(g, (str, bytes, dict)) or not isinstance(g, Sequence) or not 1 <= len(g) <= MAX_GAMES:
            raise _fail(self, "games", f"must be a list of 1 to {MAX_GAMES} game names")
        if not all(isinstance(x, str) and 1 <= len(x) <= MAX_NAME for x in g):
            raise _fail(self, "games", "must hold game names (strings)")
        object.__setattr__(self, "games", tuple(g))
        _int(self, "concurrency", lo=1, hi=MAX_CONCURRENCY)
        _bool(self, "want_legal")
        _bool(self, "want_groups", optional=True)
        _int(self, "max_games", lo=1, hi=2**31 - 1, optional=True)


@_dc
class Act(Message):
    """One action in a game. `seat` is needed only by a connection that holds both seats."""

    TYPE: ClassVar[str] = "act"
    SENDER: ClassVar[str] = "client"
    game_id: str
    action: dict[str, Any]
    seat: int | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _action(self, "action", self.action)
        _seat(self, "seat", optional=True)


@_dc
class Turn(Message):
    """Several actions, applied in order: a whole turn (ending with the game's end-of-turn
    action) or the first part of one."""

    TYPE: ClassVar[str] = "turn"
    SENDER: ClassVar[str] = "client"
    game_id: str
    actions: tuple[dict[str, Any], ...]
    seat: int | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _actions(self, "actions", min_n=1, max_n=MAX_TURN_ACTIONS)
        _seat(self, "seat", optional=True)


@_dc
class Resign(Message):
    """Give up one game."""

    TYPE: ClassVar[str] = "resign"
    SENDER: ClassVar[str] = "client"
    game_id: str
    seat: int | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _seat(self, "seat", optional=True)


@_dc
class Ping(Message):
    """Ask for a `pong` carrying the same `id` (any short string or integer, or none)."""

    TYPE: ClassVar[str] = "ping"
    SENDER: ClassVar[str] = "client"
    id: int | str | None = None

    def __post_init__(self) -> None:
        _id(self, "id")


# ---- server messages ------------------------------------------------------------------------

@_dc
class Welcome(Message):
    """The answer to a good `hello`.

    bot: the name the server knows this bot by (from its token).
    server: the server's name and version.
    max_frame: the largest frame, in bytes, the server accepts.
    max_rate: the most messages per second the server accepts from this connection (0: no limit).
    """

    TYPE: ClassVar[str] = "welcome"
    SENDER: ClassVar[str] = "server"
    bot: str
    server: str
    max_frame: int
    max_rate: int = 0

    def __post_init__(self) -> None:
        _str(self, "bot", max_len=MAX_NAME)
        _str(self, "server", max_len=MAX_NAME)
        _int(self, "max_frame", lo=64, hi=2**32 - 1)
        _int(self, "max_rate", lo=0, hi=2**31 - 1)


@_dc
class GameStart(Message):
    """A game this connection plays has started.

    game: the game's name ("heroes"); config: its full configuration map.
    seat: 1 or 2 (seat 1 moves first).
    time_control: a map of integers (or null) in milliseconds: turn_ms (budget per turn),
    increment_ms, bank_ms (overage bank at the start), lag_ms (transport allowance).
    opponent: the opponent's display name.
    """

    TYPE: ClassVar[str] = "game_start"
    SENDER: ClassVar[str] = "server"
    game_id: str
    game: str
    seat: int
    config: dict[str, Any]
    time_control: dict[str, int | None]
    opponent: str

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _str(self, "game", max_len=MAX_NAME)
        _seat(self, "seat")
        _map(self, "config")
        _map(self, "time_control")
        for k, v in self.time_control.items():
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise _fail(self, "time_control", f"entry {k!r} must be a non-negative integer or null")
        _str(self, "opponent", max_len=MAX_NAME)


@_dc
class YourTurn(Message):
    """The seat is to act and the server waits for an `act` or `turn`.

    observation: what the seat may see (for heroes: State.observation(seat).to_json()).
    time_left_ms: milliseconds left for this turn (the bank not included).
    bank_ms: milliseconds left in the overage bank, usable after time_left_ms.
    legal: the legal actions, in the game's order, if the hello asked for them.
    groups: the game's grouped legal actions, if the hello asked for them and the game has
        them: a list of groups, each a map with `options`, each option a map with `actions`
        (action maps legal in that order from this observation); the other keys are the
        game's (conquest: docs/protocol.md §6).
    """

    TYPE: ClassVar[str] = "your_turn"
    SENDER: ClassVar[str] = "server"
    game_id: str
    observation: dict[str, Any]
    time_left_ms: int
    bank_ms: int = 0
    legal: tuple[dict[str, Any], ...] | None = None
    groups: tuple[dict[str, Any], ...] | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _map(self, "observation")
        _int(self, "time_left_ms", lo=0, hi=2**53)
        _int(self, "bank_ms", lo=0, hi=2**53)
        _actions(self, "legal", min_n=0, max_n=2**31, optional=True)
        _groups(self, "groups")


@_dc
class GameEvent(Message):
    """Something this seat may now know about a game.

    seat: whose doing it was (1 or 2).
    kind: "action" (seat applied `action`), "timeout" (seat's turn was ended by the clock),
    "disconnect" / "reconnect" (seat's bot left or came back); more kinds may be added.
    action: the action as the observer may see it, for kind "action".
    """

    TYPE: ClassVar[str] = "event"
    SENDER: ClassVar[str] = "server"
    game_id: str
    seat: int
    kind: str = "action"
    action: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _seat(self, "seat")
        _str(self, "kind", max_len=MAX_NAME)
        if self.action is not None:
            _action(self, "action", self.action)


@_dc
class Result(Message):
    """The answer to an `act` or `turn`: how many of its actions were applied, and the
    error code (`illegal_action`, `not_your_turn`, ...) that stopped the rest, if any."""

    TYPE: ClassVar[str] = "result"
    SENDER: ClassVar[str] = "server"
    game_id: str
    accepted: int
    error: str | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _int(self, "accepted", lo=0, hi=MAX_TURN_ACTIONS)
        _code(self, "error", optional=True)
        _str(self, "message", min_len=0, max_len=MAX_TEXT, optional=True)

    @property
    def error_code(self) -> ErrorCode | None:
        """`error` as an ErrorCode (None if absent or unknown to this version)."""
        return _known(self.error)


@_dc
class GameOver(Message):
    """A game has ended. winner: 1 or 2, or null for a draw. reason: "rules" (the game's own
    end), "turn_limit", "resign", "timeout", "illegal_actions", "disconnect", "aborted";
    more may be added. replay_id: where the server stored the replay."""

    TYPE: ClassVar[str] = "game_over"
    SENDER: ClassVar[str] = "server"
    game_id: str
    winner: int | None
    reason: str
    replay_id: str | None = None

    def __post_init__(self) -> None:
        _str(self, "game_id", max_len=MAX_ID)
        _seat(self, "winner", optional=True)
        _str(self, "reason", max_len=MAX_NAME)
        _str(self, "replay_id", max_len=MAX_ID, optional=True)


@_dc
class Error(Message):
    """An error. With a `game_id`, it concerns that game only; without, the connection.
    Codes listed as fatal in ErrorCode are followed by the server closing the connection."""

    TYPE: ClassVar[str] = "error"
    SENDER: ClassVar[str] = "server"
    code: str
    message: str = ""
    game_id: str | None = None

    def __post_init__(self) -> None:
        _code(self, "code")
        _str(self, "message", min_len=0, max_len=MAX_TEXT)
        _str(self, "game_id", max_len=MAX_ID, optional=True)

    @property
    def error_code(self) -> ErrorCode | None:
        """`code` as an ErrorCode (None if unknown to this version)."""
        return _known(self.code)


@_dc
class Pong(Message):
    """The answer to a `ping`, with its `id`."""

    TYPE: ClassVar[str] = "pong"
    SENDER: ClassVar[str] = "server"
    id: int | str | None = None

    def __post_init__(self) -> None:
        _id(self, "id")


def _known(code: str | None) -> ErrorCode | None:
    try:
        return ErrorCode(code) if code is not None else None
    except ValueError:
        return None


CLIENT_MESSAGES: tuple[type[Message], ...] = (Hello, Act, Turn, Resign, Ping)
SERVER_MESSAGES: tuple[type[Message], ...] = (Welcome, GameStart, YourTurn, GameEvent, Result, GameOver,
                                              Error, Pong)
MESSAGE_TYPES: dict[str, type[Message]] = {c.TYPE: c for c in CLIENT_MESSAGES + SERVER_MESSAGES}


def message_from_wire(data: Any) -> Message:
    """The message a decoded frame holds. Raises RemoteProtocolError: bad_encoding (not a
    map), missing_field (`type` or `v` absent, or a required field), unknown_type,
    unsupported_version, bad_field."""
    if not isinstance(data, dict):
        raise RemoteProtocolError(ErrorCode.BAD_ENCODING, f"a frame must hold a map, not {_kind(data)}")
    if "type" not in data:
        raise RemoteProtocolError(ErrorCode.MISSING_FIELD, "a message needs field 'type'", field="type")
    t = data["type"]
    cls = MESSAGE_TYPES.get(t) if isinstance(t, str) else None
    if cls is None:
        raise RemoteProtocolError(ErrorCode.UNKNOWN_TYPE, f"no message has type {str(t)[:MAX_NAME]!r}",
                                  field="type")
    if "v" not in data:
        raise RemoteProtocolError(ErrorCode.MISSING_FIELD, f"{t} needs field 'v' (the protocol version)",
                                  field="v")
    v = data["v"]
    if isinstance(v, bool) or not isinstance(v, int):
        raise RemoteProtocolError(ErrorCode.BAD_FIELD, f"{t}.v must be an integer", field="v")
    if v != PROTOCOL_VERSION:
        raise RemoteProtocolError(ErrorCode.UNSUPPORTED_VERSION,
                                  f"this peer speaks version {PROTOCOL_VERSION}, not {v}", field="v")
    return cls.from_wire(data)


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Build a message this side is about to send from a plain map with `type` (and
    optionally `v`), e.g. one made by the referee core. Raises LocalProtocolError (the
    same codes as message_from_wire) when the map is not a valid message."""
    try:
        return message_from_wire(dict(data) if "v" in data else {**data, "v": PROTOCOL_VERSION})
    except RemoteProtocolError as e:
        raise LocalProtocolError(e.code, e.message, field=e.field) from None
