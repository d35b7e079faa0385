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
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, TypeVar

from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ._packed import Packed

PROTOCOL_VERSION = 2
"""The version this side speaks by default (a client's greeting). Version 2 is version 1 and
`hello.events` with the message `turn_events` (the other seat's turn in one message)."""
SUPPORTED_VERSIONS = (1, 2)
"""The versions a referee speaks: a connection is of its greeting's version, every message on
it carries that `v`, and a version-1 connection is exactly what it was before version 2."""
EVENTS_MODES = ("action", "turn")
"""`hello.events`: each of the other seat's actions live, one `event` each (the default), or
its whole turn in one `turn_events` when the turn ends."""

# Size limits of single fields (characters or items). Frames are limited by Connection.
MAX_NAME = 64          # bot, server and game names; reasons; kinds
MAX_TOKEN = 256        # hello.token
MAX_ID = 64            # game_id, replay_id, ping id (as text)
MAX_TEXT = 2000        # error and result messages
MAX_GAMES = 32         # hello.games entries
MAX_CONCURRENCY = 1024  # hello.concurrency
MAX_TURN_ACTIONS = 1000  # turn.actions entries
MAX_DEPTH = 32         # nesting of payload maps and lists (observation, config, actions)
MAX_INFO = 16          # act.info / turn.info entries
MAX_INFO_TEXT = 256    # a text entry of act.info / turn.info

_M = TypeVar("_M", bound="Message")

_check_built = os.environ.get("MAAG_CHECK_MESSAGES", "").strip().lower() not in ("", "0", "false", "no")


def check_built_messages(on: bool | None = None) -> bool:
    """Whether `Message.built` checks what it builds like the constructor does (off by
    default; on with $MAAG_CHECK_MESSAGES=1, which the test suite sets, so that every
    message the referee sends in a test is checked). `on` sets it; returns the setting."""
    global _check_built
    if on is not None:
        _check_built = bool(on)
    return _check_built


_WIRE_FIELDS: dict[type, tuple[tuple[str, bool, Any], ...]] = {}


def _wire_fields(cls: type) -> tuple[tuple[str, bool, Any], ...]:
    """(name, optional, default) of each field of a message class, in order (cached)."""
    got = _WIRE_FIELDS.get(cls)
    if got is None:
        got = _WIRE_FIELDS[cls] = tuple((f.name, f.default is not MISSING, f.default)
                                        for f in fields(cls))
    return got


_WIRE_NAMES: dict[type, frozenset[str]] = {}


def _wire_names(cls: type) -> frozenset[str]:
    """The field names of a message class (cached)."""
    got = _WIRE_NAMES.get(cls)
    if got is None:
        got = _WIRE_NAMES[cls] = frozenset(name for name, _, _ in _wire_fields(cls))
    return got


def _fail(msg: Message | type[Message], field: str, text: str) -> LocalProtocolError:
    return LocalProtocolError(ErrorCode.BAD_FIELD, f"{msg.TYPE}.{field} {text}", field=field)


@dataclass(frozen=True, slots=True)
class Rule:
    """What one field of a message may hold. The rules are the single source of both the
    checks made when a message is built or decoded and the JSON Schema (protocol/schema.py).

    kind: "str" (lo..hi characters), "choice" (one of `choices`), "int" (lo..hi), "bool",
    "seat" (1 or 2), "map" (a map
    of JSON data), "ms_map" (a map of non-negative integers or null), "action" (an action
    map), "actions" (lo..hi action maps), "groups" (grouped legal actions), "names" (lo..hi
    strings of 1..MAX_NAME characters), "code" (an error code), "id" (a ping id).
    optional: null is accepted (as is leaving the field out when it has a default).
    An integer may be written as a number with no fraction (2.0): JSON Schema's reading,
    which bots whose JSON library has only doubles rely on; it is stored as an int."""

    field: str
    kind: str
    lo: int = 0
    hi: int = 0
    optional: bool = False
    choices: tuple[str, ...] = ()
    """For kind "choice": the strings the field may hold."""


def _as_int(v: Any) -> Any:
    """v, or the int of a float with no fraction (JSON Schema's integers)."""
    return int(v) if type(v) is float and v.is_integer() and abs(v) < 2**63 else v


def _check_str(msg: Message, r: Rule, v: Any) -> None:
    if not isinstance(v, str):
        raise _fail(msg, r.field, f"must be a string, not {_kind(v)}")
    if not r.lo <= len(v) <= r.hi:
        raise _fail(msg, r.field, f"must have {r.lo} to {r.hi} characters, not {len(v)}")


def _check_choice(msg: Message, r: Rule, v: Any) -> None:
    if not isinstance(v, str) or v not in r.choices:
        raise _fail(msg, r.field, f"must be one of {', '.join(map(repr, r.choices))}, not {v!r}"[:MAX_TEXT])


def _check_int(msg: Message, r: Rule, v: Any) -> None:
    v = _as_int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(msg, r.field, f"must be an integer, not {_kind(v)}")
    if not r.lo <= v <= r.hi:
        raise _fail(msg, r.field, f"must be in {r.lo}..{r.hi}, not {v}")
    object.__setattr__(msg, r.field, v)


def _check_bool(msg: Message, r: Rule, v: Any) -> None:
    if not isinstance(v, bool):
        raise _fail(msg, r.field, f"must be true or false, not {_kind(v)}")


def _check_seat(msg: Message, r: Rule, v: Any) -> None:
    v = _as_int(v)
    if isinstance(v, bool) or v not in (1, 2):
        raise _fail(msg, r.field, f"must be 1 or 2, not {v!r}")
    object.__setattr__(msg, r.field, int(v))


def _check_map(msg: Message, r: Rule, v: Any) -> None:
    if not isinstance(v, dict):
        raise _fail(msg, r.field, f"must be a map, not {_kind(v)}")
    if not _plain(v):
        raise _fail(msg, r.field, "must hold only JSON data (no binary, NaN or deep nesting)")


def _check_ms_map(msg: Message, r: Rule, v: Any) -> None:
    _check_map(msg, r, v)
    out = {}
    for k, x in v.items():
        x = _as_int(x)
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 0):
            raise _fail(msg, r.field, f"entry {k!r} must be a non-negative integer or null")
        out[k] = x
    object.__setattr__(msg, r.field, out)


def _check_info(msg: Message, r: Rule, v: Any) -> None:
    if not isinstance(v, dict):
        raise _fail(msg, r.field, f"must be a map, not {_kind(v)}")
    if len(v) > r.hi:
        raise _fail(msg, r.field, f"must have at most {r.hi} entries, not {len(v)}")
    out = {}
    for k, x in v.items():
        if not isinstance(k, str) or not 1 <= len(k) <= MAX_NAME:
            raise _fail(msg, r.field, f"keys must be strings of 1 to {MAX_NAME} characters")
        x = _as_int(x)
        if isinstance(x, str):
            if len(x) > MAX_INFO_TEXT:
                raise _fail(msg, r.field, f"entry {k!r} must have at most {MAX_INFO_TEXT} characters")
        elif isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
                or abs(x) >= 2**63:
            raise _fail(msg, r.field, f"entry {k!r} must be a finite number or a string")
        out[k] = x
    object.__setattr__(msg, r.field, out)


def _check_action(msg: Message, r: Rule, v: Any) -> None:
    _action(msg, r.field, v)


def _list(msg: Message, r: Rule, v: Any, what: str) -> None:
    if isinstance(v, (str, bytes, dict)) or not isinstance(v, Sequence):
        raise _fail(msg, r.field, f"must be a list of {what}, not {_kind(v)}")
    if not r.lo <= len(v) <= r.hi:
        raise _fail(msg, r.field, f"must have {r.lo} to {r.hi} {what}, not {len(v)}")


def _check_actions(msg: Message, r: Rule, v: Any) -> None:
    _list(msg, r, v, "action maps")
    for a in v:
        _action(msg, r.field, a)
    object.__setattr__(msg, r.field, tuple(v))


def _check_names(msg: Message, r: Rule, v: Any) -> None:
    _list(msg, r, v, "game names")
    if not all(isinstance(x, str) and 1 <= len(x) <= MAX_NAME for x in v):
        raise _fail(msg, r.field, f"must hold game names (strings of 1 to {MAX_NAME} characters)")
    object.__setattr__(msg, r.field, tuple(v))


def _check_groups(msg: Message, r: Rule, v: Any) -> None:
    """A list of group maps, each with `options`: a list of maps with `actions`, a list of
    action maps (other keys are the game's)."""
    if isinstance(v, (str, bytes, dict)) or not isinstance(v, Sequence):
        raise _fail(msg, r.field, f"must be a list of group maps, not {_kind(v)}")
    for g in v:
        opts = g.get("options") if isinstance(g, dict) else None
        if isinstance(opts, (str, bytes, dict)) or not isinstance(opts, Sequence):
            raise _fail(msg, r.field, "must hold group maps with a list of 'options'")
        for o in opts:
            acts = o.get("actions") if isinstance(o, dict) else None
            if isinstance(acts, (str, bytes, dict)) or not isinstance(acts, Sequence):
                raise _fail(msg, r.field, "must hold options that are maps with a list of 'actions'")
            for a in acts:
                _action(msg, r.field, a)
        if not _plain(g):
            raise _fail(msg, r.field, "must hold only JSON data")
    object.__setattr__(msg, r.field, tuple(v))


def _check_code(msg: Message, r: Rule, v: Any) -> None:
    """An error code: any short string (codes may be added later); ErrorCode members are
    stored as their plain string value."""
    _check_str(msg, r, v)
    if isinstance(v, ErrorCode):
        object.__setattr__(msg, r.field, v.value)


def _check_id(msg: Message, r: Rule, v: Any) -> None:
    v = _as_int(v)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**53:
        object.__setattr__(msg, r.field, v)
        return
    if isinstance(v, str) and len(v) <= MAX_ID:
        return
    raise _fail(msg, r.field, f"must be null, a string of at most {MAX_ID} characters or an integer")


_CHECKS: dict[str, Callable[[Message, Rule, Any], None]] = {
    "str": _check_str, "choice": _check_choice, "int": _check_int, "bool": _check_bool, "seat": _check_seat,
    "map": _check_map,
    "ms_map": _check_ms_map, "info": _check_info, "action": _check_action, "actions": _check_actions,
    "names": _check_names,
    "groups": _check_groups, "code": _check_code, "id": _check_id,
}


def S(field: str, hi: int, lo: int = 1, optional: bool = False) -> Rule:
    """A string field of lo..hi characters."""
    return Rule(field, "str", lo, hi, optional)


def I(field: str, lo: int, hi: int, optional: bool = False) -> Rule:  # noqa: E743
    """An integer field in lo..hi."""
    return Rule(field, "int", lo, hi, optional)


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
            if tx is list and depth + 1 < MAX_DEPTH:  # (a list of small ints: squares in actions)
                for y in x:
                    if type(y) is not int or not -(2**63) <= y < 2**64:
                        break
                else:
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


def is_action(v: Any) -> bool:
    """Whether `v` is what a message may hold as an action map (its `action` rule)."""
    return isinstance(v, dict) and isinstance(v.get("type"), str) and _plain(v)


def _action(msg: Message, field: str, v: Any) -> None:
    if not isinstance(v, dict):
        raise _fail(msg, field, f"must be an action map, not {_kind(v)}")
    if not isinstance(v.get("type"), str):
        raise _fail(msg, field, "must be an action map with a string 'type'")
    if not _plain(v):
        raise _fail(msg, field, "must hold only JSON data")


class Message:
    """Base of all messages. `TYPE` is the wire `type`; `SENDER` is "client" or "server"."""

    __slots__ = ()
    TYPE: ClassVar[str]
    SENDER: ClassVar[str]
    RULES: ClassVar[tuple[Rule, ...]] = ()
    """What each field may hold: checked on construction, and the JSON Schema's source."""
    SINCE: ClassVar[int] = 1
    """The protocol version that brought this message type."""
    FIELDS_SINCE: ClassVar[dict[str, int]] = {}
    """The fields brought by a later version than the message's, with that version (a
    connection of an earlier version refuses them as unknown fields)."""

    def __post_init__(self) -> None:
        for r in self.RULES:
            v = getattr(self, r.field)
            if v is None and r.optional:
                continue
            _CHECKS[r.kind](self, r, v)

    @classmethod
    def built(cls: type[_M], **values: Any) -> _M:
        """The message, from values its sender made itself and trusts (the referee's own
        game state): the same object the constructor makes, without the checks, unless
        `check_built_messages()` is on (the tests), when it is the constructor. A value may
        be `Packed` (already msgpack: the referee's observations and legal lists); the
        field then holds it as such (read it with `plain`, or `to_wire()`)."""
        if _check_built:
            # Checked on the plain values; the Packed ones are kept, so the framing's splicing
            # of them is what the tests exercise too.
            msg = cls(**{k: v.value if type(v) is Packed else v for k, v in values.items()})
            for k, v in values.items():
                if type(v) is Packed:
                    object.__setattr__(msg, k, v)
            return msg
        return cls._fast_built(**values)  # type: ignore[attr-defined, no-any-return]

    def wire_map(self, v: int = PROTOCOL_VERSION) -> tuple[dict[str, Any], bool]:
        """What the framings encode: the message as a map like `to_wire(packed=True)` (`v`:
        the connection's version), its
        tuples kept (both framings write them as lists), and whether a value is `Packed`
        (for the msgpack framing to splice). One function per class, generated once (see
        `_compile`): every message the referee sends passes through here."""
        raise NotImplementedError  # replaced per class by _compile

    def to_wire(self, packed: bool = False, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
        """The message as a plain map: `type`, `v` (`version`), then every field (tuples
        become lists); an optional field (one with a default) is left out when it is None.
        `packed`: a field the sender holds in msgpack form (`Packed`, see `built`) stays so,
        for the framing to copy."""
        out: dict[str, Any] = {"type": self.TYPE, "v": version}
        for name, optional, _ in _wire_fields(type(self)):
            v = getattr(self, name)
            if v is None and optional:
                continue
            if isinstance(v, tuple):
                v = list(v)
            elif type(v) is Packed and not packed:
                v = v.value
            out[name] = v
        return out

    @classmethod
    def from_wire(cls: type[_M], data: Mapping[str, Any]) -> _M:
        """Build the message from a decoded map (with `type` and `v` already checked or
        absent). Raises RemoteProtocolError: missing_field or bad_field naming the field."""
        names = _wire_names(cls)
        kwargs = {}
        for key, value in data.items():
            if key not in names:
                if key == "type" or key == "v":
                    continue
                raise RemoteProtocolError(ErrorCode.BAD_FIELD, f"{cls.TYPE} has no field {key!r}",
                                          field=str(key))
            kwargs[key] = value
        if len(kwargs) < len(names):
            for name, optional, _ in _wire_fields(cls):
                if name not in kwargs and not optional:
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
    events: how the bot hears the other seat's actions (version 2): "action" (absent or null
        too: one `event` per action, as it is applied) or "turn" (its whole turn in one
        `turn_events`, when the turn ends, before this seat's `your_turn` or `game_over`).
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
    events: str | None = None

    RULES: ClassVar[tuple[Rule, ...]] = (
        S("name", MAX_NAME), S("token", MAX_TOKEN), Rule("games", "names", 1, MAX_GAMES),
        I("concurrency", 1, MAX_CONCURRENCY), Rule("want_legal", "bool"),
        I("max_games", 1, 2**31 - 1, optional=True), Rule("want_groups", "bool", optional=True),
        Rule("events", "choice", optional=True, choices=EVENTS_MODES))
    FIELDS_SINCE: ClassVar[dict[str, int]] = {"events": 2}

    @property
    def turn_events(self) -> bool:
        """Whether the bot asked to hear the other seat's turns whole (`events` "turn")."""
        return self.events == "turn"


@_dc
class Act(Message):
    """One action in a game. `seat` is needed only by a connection that holds both seats.
    `info`, optional: what the bot's search did for it (see `Turn`)."""

    TYPE: ClassVar[str] = "act"
    SENDER: ClassVar[str] = "client"
    game_id: str
    action: dict[str, Any]
    seat: int | None = None
    info: dict[str, Any] | None = None

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID), Rule("action", "action"),
                                         Rule("seat", "seat", optional=True),
                                         Rule("info", "info", 0, MAX_INFO, optional=True))


@_dc
class Turn(Message):
    """Several actions, applied in order: a whole turn (ending with the game's end-of-turn
    action) or the first part of one. `info`, optional: what the bot's search did for these
    actions (numbers or short texts; `iterations` and `time_ms` are recorded per turn in the
    game's replay); it changes nothing in the game."""

    TYPE: ClassVar[str] = "turn"
    SENDER: ClassVar[str] = "client"
    game_id: str
    actions: tuple[dict[str, Any], ...]
    seat: int | None = None
    info: dict[str, Any] | None = None

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID),
                                         Rule("actions", "actions", 1, MAX_TURN_ACTIONS),
                                         Rule("seat", "seat", optional=True),
                                         Rule("info", "info", 0, MAX_INFO, optional=True))


@_dc
class Resign(Message):
    """Give up one game."""

    TYPE: ClassVar[str] = "resign"
    SENDER: ClassVar[str] = "client"
    game_id: str
    seat: int | None = None

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID), Rule("seat", "seat", optional=True))


@_dc
class Ping(Message):
    """Ask for a `pong` carrying the same `id` (any short string or integer, or none)."""

    TYPE: ClassVar[str] = "ping"
    SENDER: ClassVar[str] = "client"
    id: int | str | None = None

    RULES: ClassVar[tuple[Rule, ...]] = (Rule("id", "id", optional=True),)


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

    RULES: ClassVar[tuple[Rule, ...]] = (S("bot", MAX_NAME), S("server", MAX_NAME),
                                         I("max_frame", 64, 2**32 - 1), I("max_rate", 0, 2**31 - 1))


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

    RULES: ClassVar[tuple[Rule, ...]] = (
        S("game_id", MAX_ID), S("game", MAX_NAME), Rule("seat", "seat"), Rule("config", "map"),
        Rule("time_control", "ms_map"), S("opponent", MAX_NAME))


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

    RULES: ClassVar[tuple[Rule, ...]] = (
        S("game_id", MAX_ID), Rule("observation", "map"), I("time_left_ms", 0, 2**53),
        I("bank_ms", 0, 2**53), Rule("legal", "actions", 0, 2**31, optional=True),
        Rule("groups", "groups", optional=True))


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

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID), Rule("seat", "seat"), S("kind", MAX_NAME),
                                         Rule("action", "action", optional=True))


@_dc
class TurnEvents(Message):
    """The other seat's turn, told at its end to a seat whose hello asked for `events`
    "turn" (version 2), before that seat's `your_turn` (or `game_over`): the `event`s of kind
    "action" it stands for, in one message.

    seat: whose actions they are (1 or 2).
    actions: the actions, in the order they were applied, each as the observer may see it
        (exactly the `action` of the `event` it stands for). Other kinds of event (timeout,
        disconnect, reconnect) are still sent as `event`s, after the actions before them.
    """

    TYPE: ClassVar[str] = "turn_events"
    SENDER: ClassVar[str] = "server"
    SINCE: ClassVar[int] = 2
    game_id: str
    seat: int
    actions: tuple[dict[str, Any], ...]

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID), Rule("seat", "seat"),
                                         Rule("actions", "actions", 1, MAX_TURN_ACTIONS))


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

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID), I("accepted", 0, MAX_TURN_ACTIONS),
                                         Rule("error", "code", 1, MAX_NAME, optional=True),
                                         S("message", MAX_TEXT, lo=0, optional=True))

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

    RULES: ClassVar[tuple[Rule, ...]] = (S("game_id", MAX_ID), Rule("winner", "seat", optional=True),
                                         S("reason", MAX_NAME), S("replay_id", MAX_ID, optional=True))


@_dc
class Error(Message):
    """An error. With a `game_id`, it concerns that game only; without, the connection.
    Codes listed as fatal in ErrorCode are followed by the server closing the connection."""

    TYPE: ClassVar[str] = "error"
    SENDER: ClassVar[str] = "server"
    code: str
    message: str = ""
    game_id: str | None = None

    RULES: ClassVar[tuple[Rule, ...]] = (Rule("code", "code", 1, MAX_NAME), S("message", MAX_TEXT, lo=0),
                                         S("game_id", MAX_ID, optional=True))

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

    RULES: ClassVar[tuple[Rule, ...]] = (Rule("id", "id", optional=True),)


def _known(code: str | None) -> ErrorCode | None:
    try:
        return ErrorCode(code) if code is not None else None
    except ValueError:
        return None


CLIENT_MESSAGES: tuple[type[Message], ...] = (Hello, Act, Turn, Resign, Ping)
SERVER_MESSAGES: tuple[type[Message], ...] = (Welcome, GameStart, YourTurn, GameEvent, TurnEvents, Result,
                                              GameOver, Error, Pong)
MESSAGE_TYPES: dict[str, type[Message]] = {c.TYPE: c for c in CLIENT_MESSAGES + SERVER_MESSAGES}


def _compile(cls: type[Message]) -> None:
    """Give `cls` its two functions of the hot path, written out per class the way
    dataclasses writes `__init__` (a loop over the fields, with a getattr and a test per
    field, cost the referee more than the rest of building and packing a message):
    `_fast_built(**fields)`, `built`'s object without the checks, and `wire_map`."""
    names = _wire_fields(cls)
    params, sets, lines = [], [], []
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "Packed": Packed}
    for i, (name, optional, default) in enumerate(names):
        env[f"_set{i}"] = cls.__dict__[name].__set__  # the slot's descriptor: what setattr calls
        env[f"_d{i}"] = default
        params.append(f"{name}=_d{i}" if optional else name)
        sets.append(f"    _set{i}(m, tuple({name}) if type({name}) is list else {name})")
        lines.append(f"    v = self.{name}")
        if optional:
            lines.append("    if v is not None:")
            lines.append(f"        out[{name!r}] = v")
            lines.append("        if type(v) is Packed: packed = True")
        else:
            lines.append(f"    out[{name!r}] = v")
            lines.append("    if type(v) is Packed: packed = True")
    src = (f"def _fast_built(*, {', '.join(params)}):\n    m = _new(_cls)\n" + "\n".join(sets)
           + "\n    return m\n"
           f"def wire_map(self, v={PROTOCOL_VERSION}):\n    out = {{'type': {cls.TYPE!r}, 'v': v}}\n"
           "    packed = False\n" + "\n".join(lines) + "\n    return out, packed\n")
    exec(compile(src, f"<maag.protocol {cls.TYPE}>", "exec"), env)  # noqa: S102 - our own source
    cls._fast_built = staticmethod(env["_fast_built"])  # type: ignore[attr-defined]
    cls.wire_map = env["wire_map"]  # type: ignore[method-assign]


for _cls in MESSAGE_TYPES.values():
    _compile(_cls)


def message_from_wire(data: Any, version: int | None = None) -> Message:
    """The message a decoded frame holds, on a connection of `version` (None: of the version
    its `v` names, any of SUPPORTED_VERSIONS). Raises RemoteProtocolError: bad_encoding (not
    a map), missing_field (`type` or `v` absent, or a required field), unknown_type (also a
    type of a later version), unsupported_version (another `v`), bad_field (also a field of
    a later version)."""
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
    v = _as_int(data["v"])
    if isinstance(v, bool) or not isinstance(v, int):
        raise RemoteProtocolError(ErrorCode.BAD_FIELD, f"{t}.v must be an integer", field="v")
    if version is None:
        if v not in SUPPORTED_VERSIONS:
            raise RemoteProtocolError(ErrorCode.UNSUPPORTED_VERSION,
                                      f"this peer speaks versions "
                                      f"{' and '.join(map(str, SUPPORTED_VERSIONS))}, not {v}", field="v")
        version = v
    elif v != version:
        raise RemoteProtocolError(ErrorCode.UNSUPPORTED_VERSION,
                                  f"this connection speaks version {version}, not {v}", field="v")
    if cls.SINCE > version:
        raise RemoteProtocolError(ErrorCode.UNKNOWN_TYPE, f"{t} is a message of version {cls.SINCE}, not "
                                  f"of version {version}", field="type")
    if cls.FIELDS_SINCE and version < PROTOCOL_VERSION:
        for key, since in cls.FIELDS_SINCE.items():
            if since > version and key in data:
                raise RemoteProtocolError(ErrorCode.BAD_FIELD,
                                          f"{t} has no field {key!r} in version {version} (since {since})",
                                          field=key)
    return cls.from_wire(data)


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Build a message this side is about to send from a plain map with `type` (and
    optionally `v`), e.g. one made by the referee core. Raises LocalProtocolError (the
    same codes as message_from_wire) when the map is not a valid message; a `v` of another
    supported version builds the message of that version."""
    try:
        return message_from_wire(dict(data) if "v" in data else {**data, "v": PROTOCOL_VERSION})
    except RemoteProtocolError as e:
        raise LocalProtocolError(e.code, e.message, field=e.field) from None
