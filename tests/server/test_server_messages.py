"""Every message the referee core produces is a valid protocol message, and the server's
unvalidated fast path for `your_turn` gives exactly what the validated one gives."""

from __future__ import annotations

import random

from maag.protocol import MESSAGE_TYPES
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import GameSession


def test_session_messages_are_valid_and_fast_path_is_identical() -> None:
    rng = random.Random(4)
    s = GameSession(
        "7",
        "heroes",
        ["a", "b"],
        config={"map": "a-small"},
        tc=TimeControl.parse("1s"),
        seed=4,
        want_legal=(True, False),
    )
    outs = s.start(0.0)
    seen = set()
    t = 0.0
    while True:
        for o in outs:
            wire = o.msg.to_wire()
            cls = MESSAGE_TYPES[wire["type"]]
            assert type(o.msg) is cls and cls.from_wire(wire) == o.msg  # a valid message, round-tripped
            seen.add(cls.TYPE)
        if s.finished:
            break
        t += 0.001
        legal = s.state.legal_actions()
        pick = (
            [rng.choice(legal).to_dict()]
            if rng.random() < 0.9
            else [{"type": "move", "from": [0, 0], "to": [6, 3]}]
        )
        outs = s.submit(s.to_move, pick, t)
    for o in s.game_over_messages(7):
        assert MESSAGE_TYPES[o.msg.TYPE].from_wire(o.msg.to_wire()) == o.msg
    assert {"game_start", "your_turn", "result", "event"} <= seen
