"""The referee's turn events (issue 57), in the transport-free session: a seat that asked
(`turn_events`) is told the other seat's actions in one `turn_events` when it is next told
anything else (its `your_turn`, `game_over`, an event of another kind), exactly the actions
the `event`s it would otherwise get carry, in order; what is held while its connection is
gone is dropped; `act` says what it holds and releases as `submit` tells it.
And a version-1 connection is sent exactly the bytes it was sent before version 2."""

from __future__ import annotations

import random
from typing import Any

from maag.protocol import (
    MAX_TURN_ACTIONS,
    Connection,
    Ended,
    GameEvent,
    Greeting,
    Hello,
    Message,
    Notice,
    Packed,
    Role,
    TurnEvents,
    Welcome,
    YourTurn,
)
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import GameSession, Out


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def pair(clock: Clock, tc: str = "inf", seed: int = 5) -> tuple[GameSession, GameSession]:
    """The same game twice: seat 2 hears seat 1's actions one event each, then once a turn."""
    return tuple(GameSession("g", "heroes", ["a", "b"], config={"map": "a-tiny"}, tc=TimeControl.parse(tc),
                             seed=seed, clock=clock, turn_events=(False, turn))
                 for turn in (False, True))  # type: ignore[return-value]


def to(outs: list[Out], seat: int) -> list[Message]:
    return [o.msg for o in outs if o.seat == seat]


def actions_told(msgs: list[Message]) -> list[dict[str, Any]]:
    return [a for m in msgs for a in (m.actions if isinstance(m, TurnEvents) else
                                      [m.action] if isinstance(m, GameEvent) and m.kind == "action" else [])]


def turn_of(s: GameSession, rng: random.Random, n: int) -> list[int]:
    """Up to `n` random actions of the seat to move that do not end its turn, then its end."""
    st = s.state.clone()
    vt = s.game.vt
    codes: list[int] = []
    while len(codes) < n:
        moves = [c for c in st.legal_codes() if not vt.is_end_turn(c)]
        if not moves:
            break
        codes.append(rng.choice(moves))
        st.apply_code(codes[-1])
    return codes + [next(c for c in st.legal_codes() if vt.is_end_turn(c))]


def test_a_whole_game_is_told_once_a_turn_and_exactly_as_events_tell_it() -> None:
    clock = Clock()
    live, turn = pair(clock)
    outs = (live.start(), turn.start())
    assert to(outs[0], 1) == to(outs[1], 1)  # (game_start: nothing held yet)
    rng = random.Random(1)
    told: tuple[list[Message], list[Message]] = ([], [])
    while not live.finished:
        seat = live.to_move
        codes = turn_of(live, rng, rng.randrange(4))
        for code in codes:  # one act each, as the fast path's commonest input
            outs = (live.submit(seat, [code], clock()), turn.submit(seat, [code], clock()))
            for t, o in zip(told, outs, strict=True):
                t.extend(to(o, 1))
            if seat == 0 and code != codes[-1] and not live.finished:
                assert to(outs[1], 1) == []  # (held: seat 2 is not woken mid-turn)
    assert turn.finished
    for t, s in zip(told, (live, turn), strict=True):
        t.extend(to(s.game_over_messages(1), 1))
    assert actions_told(told[0]) == actions_told(told[1]) and actions_told(told[0])
    kinds = [type(m).__name__ for m in told[1]]
    assert "GameEvent" not in kinds and kinds[-1] == "GameOver"
    # one turn_events per turn of seat 1, each right before seat 2's your_turn (or game_over)
    assert all(kinds[i + 1] in ("YourTurn", "GameOver") for i, k in enumerate(kinds) if k == "TurnEvents")
    turns = sum(1 for a in live.log if a["seat"] == 0 and a["action"]["type"] == "end_turn")
    assert kinds.count("TurnEvents") in (turns, turns + 1)
    # what seat 1 is told does not change
    assert [m.to_wire() for m in told[0] if not isinstance(m, (GameEvent, TurnEvents))] == \
        [m.to_wire() for m in told[1] if not isinstance(m, TurnEvents)]


def test_act_holds_and_releases_the_actions_it_says_as_submit_does() -> None:
    clock = Clock()
    _, turn = pair(clock)
    turn.start()
    codes = turn_of(turn, random.Random(2), 3)
    for i, code in enumerate(codes):
        p = turn.act(0, [code], clock())
        assert p.refused is None and list(p.live) == [] and p.accepted == 1
        assert list(p.held) == (codes if i == len(codes) - 1 else [])
        assert p.prompted == (1 if p.held else 0)
        outs = turn.messages_of(0, p)
        assert [type(o.msg).__name__ for o in outs if o.seat == 1] == (
            ["TurnEvents", "YourTurn"] if p.held else [])


def test_a_late_turn_tells_the_held_actions_before_the_timeout() -> None:
    clock = Clock()
    _, turn = pair(clock, tc="1s")
    turn.start()
    [code] = turn_of(turn, random.Random(3), 1)[:1]
    assert to(turn.submit(0, [code], clock()), 1) == []  # (held)
    clock.t += 5.0
    outs = to(turn.tick(clock()), 1)
    assert [type(m).__name__ for m in outs] == ["TurnEvents", "GameEvent", "YourTurn"]
    assert isinstance(outs[1], GameEvent) and outs[1].kind == "timeout"
    assert isinstance(outs[0], TurnEvents) and outs[0].seat == 1 and len(outs[0].actions) == 1


def test_held_actions_go_with_the_connection_and_a_seat_back_hears_the_rest() -> None:
    clock = Clock()
    live, turn = pair(clock)
    live.start()
    turn.start()
    codes = turn_of(turn, random.Random(4), 3)
    assert len(codes) >= 3
    for s in (live, turn):
        s.submit(0, [codes[0]], clock())
        s.disconnect(1, clock())
        s.submit(0, [codes[1]], clock())  # (told to no one: seat 2 is away)
        back = s.reconnect(1, clock())
        assert [type(o.msg).__name__ for o in back if o.seat == 1] == ["GameStart"]
    after = [to(s.submit(0, codes[2:], clock()), 1) for s in (live, turn)]
    assert actions_told(after[0]) == actions_told(after[1]) and len(actions_told(after[0])) == len(codes) - 2
    assert [type(m).__name__ for m in after[1]] == ["TurnEvents", "YourTurn"]


def test_a_resignation_tells_the_held_actions_before_game_over_and_a_long_turn_comes_in_parts() -> None:
    clock = Clock()
    _, turn = pair(clock)
    turn.start()
    [code] = turn_of(turn, random.Random(6), 1)[:1]
    turn.submit(0, [code], clock())
    turn.resign(0, clock())
    assert [type(m).__name__ for m in to(turn.game_over_messages(1), 1)] == ["TurnEvents", "GameOver"]


def test_the_game_over_is_data_and_takes_what_is_held() -> None:
    """`game_over` knows no messages: the end as the wire says it and, per seat, the actions
    held for it (told before its `game_over`, by its connection's `Writer`), none held after."""
    clock = Clock()
    _, turn = pair(clock)
    turn.start()
    [code] = turn_of(turn, random.Random(6), 1)[:1]
    turn.submit(0, [code], clock())
    turn.resign(0, clock())
    assert turn.game_over(3) == Ended(2, "resign", "3", ([], [code]))
    assert turn.game_over(None) == Ended(2, "resign", None, ([], []))


def test_a_seat_gone_is_data_and_takes_what_is_held() -> None:
    """`gone` knows no messages: the other seat's `disconnect` event (a `Notice`, after the
    actions held for it), None when there is nothing to tell (gone already, or for good: the
    game ends, `game_over` comes later)."""
    clock = Clock()
    _, turn = pair(clock, tc="1s")
    turn.start()
    [code] = turn_of(turn, random.Random(6), 1)[:1]
    turn.submit(0, [code], clock())
    assert turn.gone(0, clock()) == Notice(1, 0, "disconnect", [code])
    assert turn.seats[1].held == [] and turn.gone(0, clock()) is None
    assert turn.gone(1, clock(), ("crash", "x"), final=True) is None and turn.finished


def test_a_start_and_a_seat_back_are_data() -> None:
    """`begin` and `back` know no messages: the seats told the game (`game_start`), the other
    seat's `reconnect` event after the actions held for it, the seat prompted with its times."""
    clock = Clock()
    _, turn = pair(clock, tc="1s")
    o = turn.begin(clock())
    assert (o.seats, o.game, o.names, o.notice, o.prompted, o.time_left_ms, o.released) == (
        (0, 1), "heroes", ("a", "b"), None, 0, 1000, [])
    assert turn.seats[0].prompt_at == clock()  # (its thinking time starts)
    assert turn.gone(0, clock()) is not None
    [code] = turn_of(turn, random.Random(6), 1)[:1]
    turn.seats[1].held = [code]  # (held for seat 2 while seat 1 was away)
    o = turn.back(0, clock())
    assert o is not None and (o.seats, o.notice, o.prompted) == ((0,), Notice(1, 0, "reconnect", [code]), 0)
    assert turn.back(0, clock()) is None  # (not gone)


def test_a_turn_of_more_actions_than_a_message_holds_comes_in_parts() -> None:
    """As many actions held as a turn_events holds are told at once, before the turn ends, in
    parts of at most MAX_TURN_ACTIONS (no game here has such turns: the codes are told
    directly)."""
    clock = Clock()
    _, turn = pair(clock)
    turn.start()
    code = turn_of(turn, random.Random(7), 1)[0]
    turn.seats[1].held = [code] * MAX_TURN_ACTIONS  # (held)
    p = turn.act(0, [code], clock())
    assert len(p.held) == MAX_TURN_ACTIONS + 1
    outs = turn.messages_of(0, p)
    assert [len(o.msg.actions) for o in outs if isinstance(o.msg, TurnEvents)] == [MAX_TURN_ACTIONS, 1]


def _served(version: int, msgs: list[Message], encoding: str) -> bytes:
    conn = Connection(Role.SERVER)
    hello = Hello(name="b", token="t", games=["heroes"])
    client = Connection(Role.CLIENT)
    conn.receive_data(client.send(Greeting(encoding=encoding, version=version)) + client.send(hello))
    conn.next_event()
    conn.next_event()
    return b"".join(conn.send(m) for m in msgs)


def test_a_version_1_connection_gets_exactly_the_bytes_it_got_before_version_2() -> None:
    msgs: list[Message] = [
        Welcome(bot="b", server="maag 0.1.0", max_frame=262144, max_rate=2000),
        YourTurn.built(game_id="1", observation=Packed(b"\x81\xa4turn\x01"), time_left_ms=900, bank_ms=0),
        GameEvent(game_id="1", seat=2, kind="action", action={"type": "end_turn"})]
    assert _served(1, msgs, "json") == (
        b'{"type":"welcome","v":1,"bot":"b","server":"maag 0.1.0","max_frame":262144,"max_rate":2000}\n'
        b'{"type":"your_turn","v":1,"game_id":"1","observation":{"turn":1},"time_left_ms":900,"bank_ms":0}\n'
        b'{"type":"event","v":1,"game_id":"1","seat":2,"kind":"action","action":{"type":"end_turn"}}\n')
    packed = _served(1, msgs, "msgpack")
    assert b"\xa1v\x01" in packed and b"\xa1v\x02" not in packed
    assert _served(2, msgs, "msgpack") == packed.replace(b"\xa1v\x01", b"\xa1v\x02")
