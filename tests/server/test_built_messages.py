"""Message.built (the referee's messages, unchecked outside the tests) makes the same
messages and the same bytes as the checked constructor, over whole games of every game; and
the msgpack framing, which copies the observation the game's C wrote and each legal action's
map packed once (`Packed`), writes what msgpack writes of the plain message."""

from __future__ import annotations

import random

import msgpack
import pytest
from maag.engine import registry
from maag.protocol import Packed, YourTurn, check_built_messages, plain
from maag.protocol._framing import JsonLinesCodec, MsgpackCodec
from maag.server.referee.session import GameSession


def _frames(game: str, seed: int) -> list[tuple[object, bytes, bytes]]:
    s = GameSession("7", game, ("a", "b"), want_legal=(True, True), seed=seed)
    rng = random.Random(seed)
    outs = list(s.start(0.0))
    got = []
    while True:
        turn = None
        for o in outs:
            wire = o.msg.to_wire(packed=True)
            got.append((o.msg, MsgpackCodec().encode(wire), JsonLinesCodec().encode(wire)))
            if isinstance(o.msg, YourTurn):
                turn = o
        if s.finished or turn is None or len(got) > 600:
            return got
        assert isinstance(turn.msg, YourTurn) and turn.msg.legal is not None
        outs = s.submit(turn.seat, [rng.choice(plain(turn.msg.legal))], 0.0)


@pytest.mark.parametrize("game", registry.names())
def test_built_messages_are_the_checked_ones(game: str) -> None:
    was = check_built_messages()
    try:
        check_built_messages(False)
        fast = _frames(game, 5)
        check_built_messages(True)
        checked = _frames(game, 5)
    finally:
        check_built_messages(was)
    assert len(fast) == len(checked) > 3
    for (m1, b1, j1), (m2, b2, j2) in zip(fast, checked, strict=True):
        assert m1 == m2
        assert b1 == b2 and j1 == j2
        # The Packed fields copied in: the same bytes as packing the plain message whole.
        assert b1[4:] == msgpack.packb(m1.to_wire(), use_bin_type=True)
        if isinstance(m1, YourTurn):
            assert type(m1.observation) is Packed and type(m2.observation) is Packed


def test_the_suite_checks_every_message_the_referee_builds() -> None:
    """The root conftest.py turns the checks on, for this process and the servers the tests
    start as processes ($MAAG_CHECK_MESSAGES)."""
    import os

    assert check_built_messages() and os.environ.get("MAAG_CHECK_MESSAGES") == "1"
