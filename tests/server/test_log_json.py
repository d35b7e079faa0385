"""`GameSession.log_json` (the log's entries encoded once, for the action log and the stored
replay) writes exactly what `json.dumps(log[start:], separators=(",", ":"))` writes: random
games of every registered game, its plain act (`act` of one code, whose entries are written out
by hand) mixed with `submit` (plans, the seat's `info`), turns ended by the clock (`auto`
entries), illegal actions, a session rebuilt from its log midway, and the log asked for at
random points (so that entries are encoded in every order: by hand, lazily, in between); and
the stored replay with that text spliced in (`replay_json`) is `json.dumps` of the replay."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from maag.engine import registry
from maag.server.referee.clock import TimeControl
from maag.server.referee.codes import ms_text, us_of
from maag.server.referee.policy import Policy
from maag.server.referee.resume import rebuild
from maag.server.referee.session import GameSession
from maag.server.storage.base import replay_json


def _dumps(entries: list[dict]) -> str:
    return json.dumps(entries, separators=(",", ":"))


def _check(s: GameSession, rng: random.Random) -> None:
    n = rng.randrange(len(s.log) + 1)
    assert s.log_json(n) == _dumps(s.log[n:])


@settings(max_examples=12, deadline=None)
@given(game=st.sampled_from(registry.names()), seed=st.integers(0, 2**31))
def test_log_json_is_json_dumps_of_the_log(game: str, seed: int) -> None:
    rng = random.Random(seed)
    now = [0.0]
    s = GameSession("g", game, ("a", "b"), seed=seed, tc=TimeControl(turn_ms=50.0, lag_ms=0.0),
                    policy=Policy(max_late=None, max_illegal=None), clock=lambda: now[0])
    s.start(0.0)
    rebuilt = False
    for _ in range(400):
        if s.finished:
            break
        now[0] += rng.choice([0.0001, 0.0013, 0.01] * 10 + [0.2])  # 0.2 s: past the turn's 50 ms
        seat = s.to_move
        r = rng.random()
        if r < 0.05:
            s.tick(now[0])  # a late turn ends by the clock: an `auto` entry
        elif r < 0.5:
            s.act(seat, [rng.choice(list(s.state.legal_codes()))], now[0], 0.25)
        elif r < 0.55:
            s.submit(seat, [{"type": "no such action"}], now[0])  # refused: nothing logged
        else:
            plan = []
            st_ = s.state.clone()
            for _ in range(rng.randrange(1, 4)):
                if st_.is_terminal:
                    break
                c = rng.choice(list(st_.legal_codes()))
                plan.append(c)
                st_.apply_code(c)
            s.submit(seat, plan, now[0], 0.5, info={"iterations": rng.randrange(10**6), "note": "é\u2028"})
        if rng.random() < 0.2:
            _check(s, rng)
        if not rebuilt and len(s.log) > 20 and rng.random() < 0.05:
            # Another referee's copy, from the stored log: its entries come from JSON.
            resume = {k: v for k, v in s.replay().items() if k != "actions"}
            s = rebuild("g", ("a", "b"), resume, json.loads(s.log_json()), now=now[0])
            s.absent = [False, False]
            rebuilt = True
            s.seats[s.to_move].prompt_at = now[0]  # (its seat to move prompted again)
    assert s.log_json() == _dumps(s.log)
    _check(s, rng)
    assert len(s.log) > 20 or s.finished


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                       lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids,
                                                                                 max_size=3), max_leaves=8)


@settings(max_examples=30, deadline=None)
@given(replay=st.dictionaries(st.text(max_size=5), _VALUES, max_size=6),
       actions=st.lists(st.dictionaries(st.text(max_size=3), st.integers(), max_size=3), max_size=4),
       at=st.integers(0, 6))
def test_a_replay_with_its_actions_encoded_already_is_stored_as_json_dumps(replay: dict, actions: list,
                                                                           at: int) -> None:
    """`replay_json` (storage/base.py) splices the log's JSON into the replay's."""
    keys = list(replay)
    at = min(at, len(keys))
    whole = {**{k: replay[k] for k in keys[:at]}, "actions": actions, **{k: replay[k] for k in keys[at:]}}
    assert replay_json(whole, _dumps(actions)) == json.dumps(whole, separators=(",", ":"))
    assert replay_json(whole) == json.dumps(whole, separators=(",", ":"))


@settings(max_examples=400, deadline=None)
@given(us=st.integers(-10**16, 10**16) | st.integers(0, 10**7))
def test_the_logs_milliseconds_are_written_as_json_writes_their_float(us: int) -> None:
    """`ms_text` (the log's clock stamps written from integer microseconds) is exactly
    `repr(us / 1000)`, json.dumps's text of the float the entry holds."""
    assert ms_text(us) == repr(us / 1000.0) == json.dumps(us / 1000.0)


def test_ms_text_at_every_last_digit_and_the_edges() -> None:
    edges = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 10**12 + 7, 10**15 - 1, 10**15, 10**15 + 1, -1, -1000]
    near = [10**k + d for k in range(3, 16) for d in (-10, -1, 0, 1, 10, 100)]
    for us in [*range(0, 20_000), *edges, *near]:
        assert ms_text(us) == repr(us / 1000.0), us
    assert us_of(12.3456) == 12346 and us_of(0.0) == 0 and us_of(0.0004) == 0
