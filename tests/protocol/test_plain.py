"""The msgpack framing's plain frames (protocol/_plain.py: the referee's plain reader and
its connections' writer) against the general path they stand in for: `read_plain` reads
only what `next_event` would read as the same act or turn (the same game id, each action
map's very bytes), and refuses the rest (the general reader then reads it); a connection's
`Writer` writes the very frames its general encoder writes for the same result, event,
turn_events and your_turn messages."""

from __future__ import annotations

import json
import struct
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maag.protocol import (
    MAX_TURN_ACTIONS,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Act,
    Connection,
    GameEvent,
    Hello,
    Items,
    Packed,
    RemoteProtocolError,
    Result,
    Role,
    Turn,
    TurnEvents,
    Welcome,
    YourTurn,
    check_built_messages,
    read_plain,
)
from maag.protocol._framing import MsgpackCodec, make_codec
from test_protocol_schema import messages

PACK = msgpack.Packer(use_bin_type=True).pack
V = PROTOCOL_VERSION
GREET = f"MAAG {V} msgpack\n".encode()
ITEMS = Items(1 << 20)  # (one, kept across examples: as a connection keeps its own)
scalars = st.one_of(st.integers(-(2**63), 2**64 - 1), st.text(max_size=40), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner,
                                                                                  max_size=4)),
    max_leaves=12)
actions = st.builds(lambda t, rest: {"type": t, **rest}, st.sampled_from(["move", "end_turn", "deploy", "é"]),
                    st.dictionaries(st.sampled_from(["to", "from", "card", "x"]), values, max_size=3))
game_ids = st.text(min_size=1, max_size=40)


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def _general(frame: bytes) -> Any:
    """What a welcomed server connection reads from `frame` (a message, or the error)."""
    conn = Connection(Role.SERVER)
    conn.receive_data(GREET + _frame(PACK(Hello(name="b", token="t", games=["g"]).to_wire())))
    conn.next_event()
    conn.next_event()
    conn.send(Welcome(bot="b", server="s", max_frame=1 << 20))
    conn.receive_data(frame)
    try:
        return conn.next_event()
    except RemoteProtocolError as e:
        return e


def _agrees(frame: bytes, known: set[bytes], tail: bytes = b"") -> bool:
    """read_plain on `frame` (followed by `tail`) either refuses it or reads exactly what the
    general reader reads, when each action map it reads is among `known` (the referee takes
    a frame only then: the game's packed action maps); returns whether it read it."""
    got = read_plain(frame + tail, 0, 1 << 20, ITEMS)
    if got is None or not set(got[1]) <= known:
        return False
    gid, keys, end = got
    assert end == len(frame)
    m = _general(frame)
    assert isinstance(m, (Act, Turn)) and m.seat is None and m.info is None
    assert m.game_id == gid
    assert keys == [PACK(a) for a in ([m.action] if isinstance(m, Act) else m.actions)]
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gid=game_ids, acts=st.lists(actions, min_size=1, max_size=5), turn=st.booleans(),
       tail=st.binary(max_size=8))
def test_plain_acts_and_turns_are_read_as_the_general_reader_reads_them(
        gid: str, acts: list[dict[str, Any]], turn: bool, tail: bytes) -> None:
    m = Turn(game_id=gid, actions=acts) if turn else Act(game_id=gid, action=acts[0])
    frame = MsgpackCodec().encode_message(m)
    read = _agrees(frame, {PACK(a) for a in acts}, tail)
    # The form of the SDK and of msgpack libraries is read whenever the game id is short.
    assert read == (len(gid.encode()) < 32)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gid=st.text(min_size=1, max_size=8), acts=st.lists(actions, min_size=1, max_size=3),
       turn=st.booleans(), at=st.integers(0, 10**6), byte=st.integers(0, 255), cut=st.integers(0, 3))
def test_a_changed_frame_is_refused_or_read_as_the_general_reader_reads_it(
        gid: str, acts: list[dict[str, Any]], turn: bool, at: int, byte: int, cut: int) -> None:
    """Any byte changed (or a frame cut short, or its length over what is there): never
    another message than the general reader's."""
    m = Turn(game_id=gid, actions=acts) if turn else Act(game_id=gid, action=acts[0])
    frame = bytearray(MsgpackCodec().encode_message(m))
    frame[at % len(frame)] = byte
    body = bytes(frame[4:len(frame) - cut])
    known = {PACK(a) for a in acts}
    _agrees(bytes(frame[:4]) + body, known)
    _agrees(_frame(body), known)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_other_messages_are_left_to_the_general_reader(data: dict[str, Any]) -> None:
    try:
        body = PACK(data)
    except (TypeError, ValueError, OverflowError):
        return
    a = data.get("action")
    acts = data.get("actions")
    maps = (list(acts) if isinstance(acts, (list, tuple)) else []) + ([a] if a is not None else [])
    # (What the referee looks them up among: a game's action maps, each one a message may hold.)
    known = {PACK(x) for x in maps if _is_action(x)}
    _agrees(_frame(body), known)


def _is_action(x: Any) -> bool:
    try:
        Act(game_id="1", action=x)
    except Exception:
        return False
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(values, max_size=6), junk=st.binary(max_size=12), cut=st.integers(0, 3))
def test_a_list_is_cut_into_its_items_bytes(items: list[Any], junk: bytes, cut: int) -> None:
    """`Items.split`: each item's very bytes for a list of 1 or more items and nothing
    else, and right again after what it refused (a connection keeps one)."""
    data = PACK(items)
    assert ITEMS.split(data) == ([PACK(x) for x in items] if items else None)
    assert ITEMS.split(data + junk) is None or not junk
    if cut and len(data) > cut:
        assert ITEMS.split(data[:-cut]) is None
    got = ITEMS.split(junk)
    if got is not None:
        assert b"".join(got) == junk[len(junk) - sum(map(len, got)):]
        assert msgpack.unpackb(junk) == [msgpack.unpackb(x) for x in got]
    assert ITEMS.split(data) == ([PACK(x) for x in items] if items else None)


def test_a_small_frame_limit_reads_turns_too() -> None:
    """(A connection's frame limit can be as small as 64 bytes: its reader of a turn's list
    works with it, and refuses a list longer than it.)"""
    items = Items(64)
    acts = [{"type": "end_turn"}]
    assert items.split(PACK(acts)) == [PACK(acts[0])]
    assert items.split(PACK(acts * 40)) is None
    assert items.split(PACK(acts)) == [PACK(acts[0])]


def test_unusual_forms_of_an_act_are_left_to_the_general_reader() -> None:
    act = {"type": "end_turn"}
    known = {PACK(act)}
    usual = {"type": "act", "v": V, "game_id": "12", "action": act}
    assert _agrees(_frame(PACK(usual)), known)
    for other in ({"v": V, "type": "act", "game_id": "12", "action": act},  # another key order
                  {**usual, "seat": 1}, {**usual, "info": {"iterations": 3}},  # more fields
                  {**usual, "game_id": "1" * 40}):  # a long game id (str8)
        assert not _agrees(_frame(PACK(other)), known)
    # the same map with a duplicate key, and an int not in its smallest form
    dup = b"\x85" + PACK("type") + PACK("act") + PACK("v") + PACK(V) + PACK("game_id") + PACK("12") + PACK(
        "action") + PACK(act) + PACK("action") + PACK(act)
    assert not _agrees(_frame(dup), known)
    wide = PACK(usual).replace(PACK("v") + PACK(V), PACK("v") + b"\xcc" + bytes([V]))
    assert not _agrees(_frame(wide), known)
    assert isinstance(_general(_frame(wide)), Act)  # (which the general reader reads)
    # a turn with no action, and a frame whose length is 0 or past the data
    assert not _agrees(_frame(PACK({"type": "turn", "v": V, "game_id": "12", "actions": []})), known)
    assert read_plain(b"\x00\x00\x00\x00", 0, 1 << 20, ITEMS) is None
    assert read_plain(_frame(PACK(usual))[:-1], 0, 1 << 20, ITEMS) is None
    assert read_plain(_frame(PACK(usual)), 0, 10, ITEMS) is None  # over max_frame


def test_a_plain_frame_is_read_in_its_connections_version() -> None:
    """A version-1 connection's plain frames carry `v` 1: read as such, and a frame of the
    other version is left to the general reader (which refuses it)."""
    for version in SUPPORTED_VERSIONS:
        conn = Connection(Role.SERVER)
        conn.receive_data(f"MAAG {version} msgpack\n".encode()
                          + _frame(PACK(Hello(name="b", token="t", games=["g"]).to_wire(version=version))))
        conn.next_event()
        conn.next_event()
        conn.send(Welcome(bot="b", server="s", max_frame=1 << 20))
        for v in SUPPORTED_VERSIONS:
            frame = _frame(PACK({"type": "act", "v": v, "game_id": "12", "action": {"type": "end_turn"}}))
            assert (conn.plain(frame) is not None) == (v == version), (version, v)


def test_a_plain_frame_is_read_only_on_a_welcomed_msgpack_connection() -> None:
    frame = _frame(PACK({"type": "act", "v": V, "game_id": "12", "action": {"type": "end_turn"}}))
    conn = Connection(Role.SERVER)
    assert conn.plain(frame) is None  # (before the greeting)
    conn.receive_data(GREET + _frame(PACK(Hello(name="b", token="t", games=["g"]).to_wire())))
    conn.next_event()
    conn.next_event()
    assert conn.plain(frame) is None and not conn.sends_plain()  # (before the welcome)
    conn.send(Welcome(bot="b", server="s", max_frame=1 << 20))
    assert conn.plain(frame) == ("12", [PACK({"type": "end_turn"})], len(frame)) and conn.sends_plain()
    conn.receive_data(frame[:3])
    assert conn.plain(frame) is None  # (input buffered: it goes first)
    json_conn = Connection(Role.SERVER)
    json_conn.receive_data(f"MAAG {V} json\n".encode())
    json_conn.next_event()
    assert json_conn.plain(frame) is None and not json_conn.sends_plain()


class _Actions:
    """A game's actions as a `Writer` reads them (`ActionMaps`): code i is `maps[i]`."""

    def __init__(self, maps: list[dict[str, Any]], packed: list[bytes] | None = None) -> None:
        self.maps, self.packed = maps, packed or [PACK(m) for m in maps]

    def public_map(self, code: int) -> dict[str, Any]:
        return self.maps[code]

    def public_msgpack(self, code: int) -> bytes:
        return self.packed[code]


class _State:
    """A state as a `Writer` reads it (`Prompter`): `prompt_msgpack` as the engine's C writes
    it (tests/engine/test_every_game.py checks the C against this very concatenation)."""

    def __init__(self, obs: dict[str, Any], legal: list[dict[str, Any]] | None) -> None:
        self.obs, self.legal = PACK(obs), PACK(legal or [])

    def observation_msgpack(self, seat: int) -> bytes:
        return self.obs

    def legal_msgpack(self) -> bytes:
        return self.legal

    def prompt_msgpack(self, seat: int, head: bytes, mid: bytes, tail: bytes, legal: bool) -> bytes:
        return _frame(head + self.obs + mid + (self.legal if legal else b"") + tail)


def _welcomed(version: int, encoding: str) -> Connection:
    conn = Connection(Role.SERVER)
    conn.receive_data(f"MAAG {version} {encoding}\n".encode()
                      + (_frame(PACK(Hello(name="b", token="t", games=["g"]).to_wire(version=version)))
                         if encoding == "msgpack" else
                         json.dumps(Hello(name="b", token="t", games=["g"]).to_wire(version=version)).encode()
                         + b"\n"))
    conn.next_event()
    conn.next_event()
    conn.send(Welcome(bot="b", server="s", max_frame=1 << 20))
    return conn


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gid=game_ids, accepted=st.integers(0, 1000), seat=st.sampled_from([1, 2]), action=actions,
       obs=st.dictionaries(st.text(max_size=8), values, max_size=6), left=st.integers(0, 2**53),
       bank=st.integers(0, 2**53), legal=st.none() | st.lists(actions, max_size=5),
       groups=st.none() | st.lists(st.fixed_dictionaries({"options": st.lists(st.fixed_dictionaries(
           {"actions": st.lists(actions, max_size=2)}), max_size=2)}), max_size=2),
       version=st.sampled_from(SUPPORTED_VERSIONS), encoding=st.sampled_from(["msgpack", "json"]),
       turn=st.lists(actions, min_size=1, max_size=40))
def test_a_connections_writer_writes_the_general_encoding(
        gid: str, accepted: int, seat: int, action: dict[str, Any], obs: dict[str, Any], left: int, bank: int,
        legal: list[dict[str, Any]] | None, groups: list[dict[str, Any]] | None, version: int, encoding: str,
        turn: list[dict[str, Any]]) -> None:
    """The one writer of a game's replies: from templates on msgpack, through `send` on JSON
    lines; the same bytes as the connection's general encoder either way."""
    conn = _welcomed(version, encoding)
    codec = make_codec(encoding, version)
    w = conn.writer
    assert w is conn.writer and conn.sends_plain() == (encoding == "msgpack")
    if version >= TurnEvents.SINCE:  # a turn's actions in one message (or more), from the same action maps
        n = MAX_TURN_ACTIONS
        assert w.turn_events(gid, seat, range(len(turn)), _Actions(turn)) == [
            codec.encode_message(TurnEvents.built(game_id=gid, seat=seat, actions=turn[i:i + n]))
            for i in range(0, len(turn), n)]
    for _ in range(2):  # (cached)
        assert w.result(gid, accepted) == codec.encode_message(Result.built(game_id=gid, accepted=accepted))
    event = codec.encode_message(GameEvent.built(game_id=gid, seat=seat, kind="action", action=action))
    assert w.events(gid, seat, [0, 0], _Actions([action])) == [event, event]
    state = _State(obs, legal)
    for _ in range(2):  # (the time fields are kept from one to the next)
        msg = YourTurn.built(game_id=gid, observation=Packed(PACK(obs)), time_left_ms=left, bank_ms=bank,
                             legal=None if legal is None else Packed(PACK(legal)), groups=groups)
        assert w.your_turn(gid, state, 0, left, bank, legal is not None, groups) == codec.encode_message(msg)
        left, bank = bank, left


def test_the_checked_mode_refuses_a_template_frame_that_is_not_the_general_encoding() -> None:
    """With the suite's message checks on, every frame written from templates is compared
    with the general encoding of its message: an action whose packed map is not its map's
    encoding is caught."""
    assert check_built_messages()
    w = _welcomed(V, "msgpack").writer
    w.events("1", 1, [0], _Actions([{"type": "end_turn"}]))
    with pytest.raises(AssertionError, match="differs from the general encoding"):
        w.events("2", 1, [0], _Actions([{"type": "end_turn"}], [PACK({"type": "end_turm"})]))
