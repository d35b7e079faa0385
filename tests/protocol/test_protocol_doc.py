"""docs/protocol.md's example session is valid: every line a person types is accepted by
a server Connection, and every whole server line by a client Connection, in order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from maag.protocol import (
    FATAL,
    Connection,
    ConnectionClosed,
    ErrorCode,
    LocalProtocolError,
    Message,
    Role,
    message_from_dict,
)
from proto_helpers import drain

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def session_lines() -> list[str]:
    text = DOC.read_text()
    block = text.split("## 7. Example session", 1)[1].split("```", 2)[1]
    return [ln for ln in block.splitlines() if ln.startswith(("> ", "< "))]


def test_the_example_session_is_accepted_line_by_line() -> None:
    lines = session_lines()
    assert len(lines) > 15
    server, client = Connection(Role.SERVER), Connection(Role.CLIENT)
    seen_server = 0
    for ln in lines:
        who, text = ln[0], ln[2:]
        if who == ">":
            server.receive_data(text.encode() + b"\n")
            events = drain(server)
            assert len(events) == 1, ln
            client.send(events[0])  # the client could have sent it at this point
        elif not text.endswith("…"):
            client.receive_data(text.encode() + b"\n")
            [msg] = drain(client)
            server.send(msg)  # and the server could have sent it
            seen_server += 1
    assert seen_server > 8


def test_every_error_code_is_documented_with_its_fatality() -> None:
    text = DOC.read_text()
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| (yes|no) \|", text, flags=re.M))
    assert set(rows) == {c.value for c in ErrorCode}
    assert {c for c, fatal in rows.items() if fatal == "yes"} == {c.value for c in FATAL}


def test_every_message_field_is_documented() -> None:
    import dataclasses

    from maag.protocol import MESSAGE_TYPES

    text = DOC.read_text()
    for t, cls in MESSAGE_TYPES.items():
        row = next((ln for ln in text.splitlines() if ln.startswith(f"| `{t}` |")), None)
        assert row is not None, t
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            assert f"`{f.name}`" in row, (t, f.name)


def test_message_from_dict_builds_local_messages() -> None:
    msg = message_from_dict({"type": "result", "game_id": "g1", "accepted": 0, "error": "bad_action",
                             "message": "x"})
    assert isinstance(msg, Message) and msg.to_wire()["v"] == 2
    with pytest.raises(LocalProtocolError) as info:
        message_from_dict({"type": "result", "game_id": "g1"})
    assert info.value.field == "accepted"
    assert json.loads(json.dumps(msg.to_wire())) == msg.to_wire()
    assert ConnectionClosed() == ConnectionClosed()
