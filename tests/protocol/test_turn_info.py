"""`act.info` and `turn.info`: what a bot's search did, optional, checked like every field,
and nothing a bot without it must send."""

from __future__ import annotations

import math
from typing import Any

import pytest
from maag.clients._client import wire_info
from maag.protocol import (
    MAX_INFO,
    MAX_INFO_TEXT,
    Act,
    ErrorCode,
    RemoteProtocolError,
    Turn,
    message_from_wire,
)

END = {"type": "end_turn"}


def test_info_is_optional_and_round_trips() -> None:
    plain = Turn(game_id="g", actions=(END,))
    assert "info" not in plain.to_wire()  # what an older bot sends is unchanged
    assert message_from_wire({"type": "turn", "v": 1, "game_id": "g", "actions": [END]}) == plain
    info = {"iterations": 123456, "time_ms": 951.5, "nodes": 7.0, "string": "pv a1"}
    t = Turn(game_id="g", actions=(END,), info=info)
    back = message_from_wire(t.to_wire())
    assert isinstance(back, Turn) and back.info == {**info, "nodes": 7}  # 7.0 is the integer 7
    a = Act(game_id="g", action=END, info={"iterations": 5})
    assert message_from_wire(a.to_wire()) == a


@pytest.mark.parametrize("info", [
    [1, 2],                                        # not a map
    {"iterations": math.nan},                      # not finite
    {"iterations": True},                          # a boolean is no number
    {"pv": [1, 2]},                                # no lists
    {"": 1},                                       # an empty key
    {"k" * 65: 1},                                 # a key too long
    {"s": "x" * (MAX_INFO_TEXT + 1)},              # a text too long
    {f"k{i}": i for i in range(MAX_INFO + 1)},     # too many entries
])
def test_bad_info_is_refused_naming_the_field(info: Any) -> None:
    with pytest.raises(RemoteProtocolError) as e:
        message_from_wire({"type": "turn", "v": 1, "game_id": "g", "actions": [END], "info": info})
    assert e.value.code == ErrorCode.BAD_FIELD and e.value.field == "info"


def test_the_sdk_sends_the_numbers_and_texts_of_a_turn_result_info() -> None:
    info = {"iterations": 10, "time_ms": 2.5, "score": 0.6, "pv": [{"type": "end_turn"}], "string": "x" * 300,
            "flag": True, "bad": math.inf}
    out = wire_info(info)
    assert out == {"iterations": 10, "time_ms": 2.5, "score": 0.6, "string": "x" * MAX_INFO_TEXT}
    Turn(game_id="g", actions=(END,), info=out)  # valid as sent
    assert wire_info({"pv": []}) is None
    assert len(wire_info({f"k{i}": i for i in range(40)}) or {}) == MAX_INFO
