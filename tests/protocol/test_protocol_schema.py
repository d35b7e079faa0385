"""The protocol's JSON Schema (maag.protocol.schema) says what the protocol itself accepts:
it is valid JSON Schema 2020-12, it refuses every malformed message of the protocol's own
tests, and on random messages (hypothesis) it accepts exactly what the server's checks
accept, within JSON's reach (payloads shallower than MAX_DEPTH, integers within 64 bits)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maag.protocol import MESSAGE_TYPES, RemoteProtocolError, message_from_wire
from maag.protocol._messages import Rule
from maag.protocol.schema import field_schema, message_schema
from test_protocol_malformed import ACT, HELLO, HELLO_CASES, SCHEMA_CASES, TURN

SCHEMA = message_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

VALID: dict[str, dict[str, Any]] = {
    "hello": {"name": "b", "token": "t", "games": ["heroes"]},
    "act": {"game_id": "g", "action": {"type": "end_turn"}},
    "turn": {"game_id": "g", "actions": [{"type": "end_turn"}]},
    "resign": {"game_id": "g"},
    "ping": {},
    "welcome": {"bot": "b", "server": "s", "max_frame": 65536},
    "game_start": {"game_id": "g", "game": "heroes", "seat": 1, "config": {}, "time_control": {"turn_ms": 1},
                   "opponent": "o"},
    "your_turn": {"game_id": "g", "observation": {}, "time_left_ms": 5},
    "event": {"game_id": "g", "seat": 2},
    "turn_events": {"game_id": "g", "seat": 2, "actions": [{"type": "end_turn"}]},
    "result": {"game_id": "g", "accepted": 1},
    "game_over": {"game_id": "g", "winner": None, "reason": "rules"},
    "error": {"code": "bad_field"},
    "pong": {},
}


def server_accepts(data: dict[str, Any]) -> bool:
    try:
        message_from_wire(data)
    except RemoteProtocolError:
        return False
    return True


def test_the_schema_is_valid_json_schema_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert set(VALID) == set(MESSAGE_TYPES) == {k for k in SCHEMA["$defs"] if k in MESSAGE_TYPES}


def test_every_field_of_every_message_has_a_rule_and_a_schema() -> None:
    from dataclasses import fields

    for cls in MESSAGE_TYPES.values():
        rules = {r.field: r for r in cls.RULES}
        assert [f.name for f in fields(cls)] == list(rules), cls.TYPE  # type: ignore[arg-type]
        for r in cls.RULES:
            assert field_schema(cls, r)
    with pytest.raises(ValueError, match="no schema"):
        field_schema(MESSAGE_TYPES["ping"], Rule("id", "colour"))


@pytest.mark.parametrize("t", sorted(VALID))
def test_the_valid_messages_are_valid_under_both(t: str) -> None:
    data = {"type": t, "v": 2, **VALID[t]}
    assert server_accepts(data) and VALIDATOR.is_valid(data)
    old = {**data, "v": 1}  # a version-1 connection's: the same, but for what version 2 brought
    assert server_accepts(old) == VALIDATOR.is_valid(old) == (t != "turn_events")
    for hello in ({**old, "events": "turn"}, {**old, "events": None}):
        assert not server_accepts(hello) and not VALIDATOR.is_valid(hello)


@pytest.mark.parametrize("case, msg, code, field", SCHEMA_CASES + HELLO_CASES,
                         ids=[c[0] for c in SCHEMA_CASES + HELLO_CASES])
def test_every_malformed_message_of_the_protocol_tests_is_refused_by_the_schema(
        case: str, msg: dict[str, Any], code: Any, field: str) -> None:
    assert not server_accepts(msg)
    assert not VALIDATOR.is_valid(msg), case
    for good in (ACT, HELLO, TURN):
        assert VALIDATOR.is_valid(good)


# ---- random messages: the schema and the server agree --------------------------------------

SCALARS = (st.none() | st.booleans()
           | st.sampled_from([-1, 0, 1, 2, 3, 63, 64, 65, 1000, 1001, 1024, 1025, 2**31 - 1, 2**31, 2**53])
           | st.integers(-(2**62), 2**62) | st.floats(allow_nan=False, allow_infinity=False)
           | st.sampled_from([1.0, 2.0, 2.5, 64.0])
           | st.text(max_size=70) | st.sampled_from(["", "g" * 65, "t" * 257, "m" * 2001, "end_turn"]))
ACTIONS = st.fixed_dictionaries({"type": st.text(max_size=8) | st.integers()},
                                optional={"x": SCALARS})
VALUES = st.recursive(SCALARS | ACTIONS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4)
                      | st.fixed_dictionaries({"options": st.lists(st.fixed_dictionaries(
                          {"actions": st.lists(ACTIONS | inner, max_size=3)}), max_size=3)}), max_leaves=12)
DROP = object()


def near(r: Rule) -> st.SearchStrategy[Any]:
    """Values at the edges of what a rule allows, on both sides."""
    k, lo, hi = r.kind, r.lo, r.hi
    if k == "choice":
        return st.sampled_from([*r.choices, "", "other", None, 1])
    if k in ("str", "code"):
        return st.sampled_from([lo - 1, lo, hi, hi + 1]).filter(lambda n: n >= 0).map(lambda n: "é" * n)
    if k == "int":
        return st.sampled_from([lo - 1, lo, hi, hi + 1, float(lo), float(hi), lo + 0.5, True])
    if k == "seat":
        return st.sampled_from([0, 1, 2, 3, 1.0, 2.0, 1.5, True, "1"])
    if k == "id":
        return st.sampled_from([2**53 - 1, 2**53, -(2**53) + 1, 3.0, "x" * 64, "x" * 65, [1]])
    if k in ("actions", "names"):
        item = {"type": "end_turn"} if k == "actions" else "heroes"
        return st.sampled_from([lo - 1, lo, min(hi, 40), hi + 1 if hi < 2000 else 3]).filter(
            lambda n: n >= 0).map(lambda n: [item] * n)
    if k == "ms_map":
        return st.dictionaries(st.sampled_from(["turn_ms", "bank_ms", "x"]),
                               st.sampled_from([None, 0, -1, 5, 5.0, 5.5, True, "5"]), max_size=3)
    if k == "groups":
        return st.sampled_from([[], [{"options": []}], [{"options": [{"actions": []}]}],
                                [{"options": [{"actions": [{"type": "x"}], "units": [1]}], "t": "B1"}],
                                [{"options": [{"actions": [{"type": 1}]}]}], [{"options": {}}], [[]]])
    return VALUES


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    t = draw(st.sampled_from(sorted(VALID)))
    data: dict[str, Any] = {"type": t, "v": draw(st.sampled_from([1, 2])), **VALID[t]}
    rules = {r.field: r for r in MESSAGE_TYPES[t].RULES}
    names = [*rules, "v", "colour"]
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(names))
        value = draw(st.just(DROP) | VALUES | (near(rules[name]) if name in rules else st.nothing()))
        if value is DROP:
            data.pop(name, None)
        else:
            data[name] = value
    return data


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_the_schema_accepts_exactly_what_the_server_accepts(data: dict[str, Any]) -> None:
    assert VALIDATOR.is_valid(data) == server_accepts(data), (
        data, [e.message for e in VALIDATOR.iter_errors(data)][:3])
