"""A game rebuilt from its logged actions after a takeover (referee/resume.py): the same
position, the same clocks as far as the log tells them, play goes on to an ending whose
replay re-simulates; its clocks stand still until each seat is back, and a seat that never
comes back aborts the game rather than losing it."""

from __future__ import annotations

import random

from maag.server.referee.clock import TimeControl
from maag.server.referee.replay import resimulate, state_at
from maag.server.referee.resume import rebuild
from maag.server.referee.session import GameSession, Policy, Reason


def played(plies: int, seed: int = 11) -> tuple[GameSession, float]:
    """A game of random legal actions, 10 ms apart, stopped after `plies` actions."""
    rng = random.Random(seed)
    t = 100.0
    s = GameSession("7", "heroes", ["alice", "bob"], config={"map": "a-tiny"}, tc=TimeControl.parse("1s+100"),
                    policy=Policy(disconnect_grace_ms=5000), seed=seed, clock=lambda: t)
    s.start(t)
    while not s.finished and len(s.log) < plies:
        t += 0.01
        seat = s.to_move
        s.submit(seat, [s.game.action(rng.choice(s.state.legal_codes()))], t)
    return s, t


def header(s: GameSession) -> dict:
    r = s.replay()
    return {k: r[k] for k in ("game", "config", "seed", "start_state", "time_control", "policy", "tags")}


def test_a_rebuilt_game_is_where_its_log_ends_and_plays_on() -> None:
    s, t = played(30)
    log = list(s.log[:23])  # the rest was accepted but never logged
    r = rebuild("7", ["alice", "bob"], header(s), log, now=t + 60)
    assert r.state.hash() == state_at(s.replay(), 23).hash()
    assert r.to_move == state_at(s.replay(), 23).current_player
    think = [sum(e.get("think_ms", 0.0) for e in log if e["seat"] == i) for i in (0, 1)]
    assert [round(x.clock.think_total_ms, 3) for x in r.seats] == [round(x, 3) for x in think]
    assert r.next_deadline() == t + 60 + 5.0  # only the grace period: both clocks stand still
    seat = r.to_move
    back = r.reconnect(seat, t + 61)
    assert [o.msg.TYPE for o in back if o.seat == seat] == ["game_start", "your_turn"]
    assert r.seats[seat].prompt_at == t + 61  # its clock runs from its new prompt
    r.reconnect(1 - seat, t + 61)
    rng = random.Random(3)
    now = t + 61
    while not r.finished:
        now += 0.01
        r.submit(r.to_move, [r.game.action(rng.choice(r.state.legal_codes()))], now)
    check = resimulate(r.replay())
    assert check.plies == len(r.log) > 23 and r.log[:23] == log


def test_a_seat_that_never_comes_back_aborts_the_game() -> None:
    s, t = played(12)
    r = rebuild("7", ["alice", "bob"], header(s), list(s.log), now=t)
    r.reconnect(0, t + 1)
    assert r.tick(t + 4.9) == [] and not r.finished
    r.tick(t + 5.0)
    assert r.outcome is not None and r.outcome.reason == Reason.ABORTED and r.outcome.winner is None
    quick = rebuild("7", ["alice", "bob"], header(s), list(s.log), now=t, wait_ms=1000)  # the claimer's
    assert quick.next_deadline() == t + 1.0
