"""The transport-free referee: turns, plans, clocks, policies, visibility, replays."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from maag.engine import Game
from maag.engine.seeds import derive_seed
from maag.protocol import ErrorCode, Message, Refusal
from maag.server.referee.clock import TimeControl
from maag.server.referee.replay import ReplayError, resimulate, state_at
from maag.server.referee.session import GameSession, LatePolicy, Out, Policy, Reason


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def advance(self, ms: float) -> float:
        self.t += ms / 1000
        return self.t


def session(clock: FakeClock, tc: str = "1s", policy: Policy | None = None, seed: int = 7,
            **kw: Any) -> GameSession:
    return GameSession("g1", "heroes", ["alice", "bob"], config={"map": "a"}, tc=TimeControl.parse(tc),
                       policy=policy, seed=seed, want_legal=(True, True), clock=clock, **kw)


def _wire(msg: Message) -> dict[str, Any]:
    """A message as the map the wire carries (without the protocol version)."""
    return {k: v for k, v in msg.to_wire().items() if k != "v"}


def of_type(outs: list[Out], t: str, seat: int | None = None) -> list[dict[str, Any]]:
    return [_wire(o.msg) for o in outs if o.msg.TYPE == t and (seat is None or o.seat == seat)]


def play_random(s: GameSession, clock: FakeClock, rng: random.Random, plan: bool = False) -> int:
    """Drive both seats with uniformly random legal actions; returns messages exchanged."""
    outs = s.start(clock())
    n = 0
    while not s.finished:
        yt = of_type(outs, "your_turn")
        assert len(yt) == 1
        seat = s.to_move
        legal = yt[0]["legal"]
        st = s.state.clone()
        if plan:
            acts = []
            while True:
                a = rng.choice(st.legal_actions())
                st.apply(a)
                acts.append(a.to_dict())
                if acts[-1]["type"] == "end_turn" or st.is_terminal:
                    break
            clock.advance(3)
            outs = s.submit(seat, acts, clock())
            n += 1
        else:
            while True:
                a = rng.choice(legal)
                clock.advance(1)
                outs = s.submit(seat, [a], clock())
                n += 1
                res = of_type(outs, "result", seat)
                assert res and res[0]["accepted"] == 1 and "error" not in res[0], res
                if a["type"] == "end_turn" or s.finished:
                    break
                legal = [x.to_dict() for x in s.state.legal_actions()]
    return n


@pytest.mark.parametrize("plan", [False, True])
def test_random_game_and_replay(plan: bool) -> None:
    clock = FakeClock()
    s = session(clock)
    play_random(s, clock, random.Random(3), plan)
    assert s.outcome is not None and s.outcome.reason in (Reason.RULES, Reason.TURN_LIMIT)
    rp = json.loads(json.dumps(s.replay()))  # survives the storage round trip
    check = resimulate(rp)
    assert check.plies == len(s.log) == s.outcome.plies
    assert check.winner == s.outcome.winner
    assert check.hashes_checked >= 10
    assert state_at(rp, -1) == s.state
    # A tampered log is caught.
    bad = json.loads(json.dumps(rp))
    bad["seed"] += 1
    with pytest.raises(ReplayError):
        resimulate(bad)


def test_reproducible_with_seed() -> None:
    logs = []
    for _ in range(2):
        clock = FakeClock()
        s = session(clock, seed=derive_seed(42, 3))
        play_random(s, clock, random.Random(9))
        logs.append(s.log)
    assert logs[0] == logs[1]
    assert derive_seed(42, 3) != derive_seed(42, 4)


def test_game_start_and_first_turn() -> None:
    clock = FakeClock()
    s = session(clock, tc="500ms+100,bank=2s")
    outs = s.start(clock())
    starts = of_type(outs, "game_start")
    assert [m["seat"] for m in starts] == [1, 2]
    assert starts[0]["opponent"] == "bob" and starts[1]["opponent"] == "alice"
    assert starts[0]["time_control"]["turn_ms"] == 500
    (yt,) = of_type(outs, "your_turn", 0)
    assert yt["time_left_ms"] == 500 and yt["bank_ms"] == 2000
    obs = yt["observation"]
    assert obs["observer"] == 1 and obs["hands"]["2"] == [] and "deck_seed" not in obs
    assert len(obs["hands"]["1"]) == 6


def test_illegal_actions_leave_state_and_forfeit_after_n() -> None:
    clock = FakeClock()
    s = session(clock, policy=Policy(max_illegal=3))
    s.start(clock())
    before = s.state.to_json()
    outs = s.submit(0, [{"type": "move", "from": [0, 0], "to": [1, 1]}], clock.advance(1))
    (res,) = of_type(outs, "result", 0)
    assert res["error"] == "illegal_action" and res["accepted"] == 0 and res["message"]
    assert s.state.to_json() == before
    outs = s.submit(0, [{"type": "fly"}], clock.advance(1))
    assert of_type(outs, "result", 0)[0]["error"] == "bad_action"
    assert not s.finished
    # A plan: the legal first action stands, the illegal second one is refused.
    first = s.state.legal_actions()[0].to_dict()
    outs = s.submit(0, [first, {"type": "attack", "from": [5, 5], "to": [6, 6]}], clock.advance(1))
    res = of_type(outs, "result", 0)[0]
    assert res["accepted"] == 1 and res["error"] == "illegal_action"
    assert of_type(outs, "event", 1)[0]["action"] == first
    assert s.finished and s.outcome is not None
    assert s.outcome.reason == Reason.ILLEGAL and s.outcome.winner == 1
    assert resimulate(s.replay()).plies == 1


def test_out_of_turn_is_refused_without_penalty() -> None:
    clock = FakeClock()
    s = session(clock, policy=Policy(max_illegal=1))
    s.start(clock())
    for _ in range(3):
        outs = s.submit(1, [{"type": "end_turn"}], clock.advance(1))
        assert of_type(outs, "result", 1)[0]["error"] == "not_your_turn"
    assert not s.finished and s.to_move == 0


def test_partial_plans_and_actions_after_end_turn() -> None:
    clock = FakeClock()
    s = session(clock)
    s.start(clock())
    st = s.state.clone()
    a1 = st.legal_actions()[0]
    st.apply(a1)
    a2 = st.legal_actions()[0]
    outs = s.submit(0, [a1.to_dict()], clock.advance(1))
    assert of_type(outs, "result", 0)[0] == {"type": "result", "game_id": "g1", "accepted": 1}
    (again,) = of_type(outs, "your_turn", 0)  # the turn goes on: a new observation
    assert again["observation"]["ap"] == 2 and again["legal"] == [a.to_dict() for a in st.legal_actions()]
    outs = s.submit(0, [a2.to_dict(), {"type": "end_turn"}, {"type": "end_turn"}], clock.advance(1))
    res = of_type(outs, "result", 0)[0]
    assert res["accepted"] == 2 and res["error"] == "not_your_turn"
    assert len(of_type(outs, "event", 1)) == 2 and len(of_type(outs, "your_turn", 1)) == 1
    assert s.to_move == 1


def test_a_plans_refusals_say_where_it_stopped_and_its_log_is_one_entry_an_action() -> None:
    """A plan is stepped at once (`State.step_plan`): what it applied is logged entry by entry
    (the message's thinking time on its first, the state's hash on its end_turn), and its
    refusal names the first action not applied, whatever stopped it."""
    clock = FakeClock()
    s = session(clock)
    s.start(clock())
    st = s.state.clone()
    a1 = st.legal_actions()[0].to_dict()
    st.apply(a1)
    a2 = st.legal_actions()[0].to_dict()
    # Past its end_turn, a malformed map included: the end of the turn is what stopped it.
    outs = s.submit(0, [a1, a2, {"type": "end_turn"}, {"type": "fly"}, a1], clock.advance(3))
    (res,) = of_type(outs, "result", 0)
    assert (res["accepted"], res["error"]) == (3, "not_your_turn")
    assert res["message"] == "actions 3.. of the plan came after end_turn: ignored"
    entries = s.log[-3:]
    assert [e["action"] for e in entries] == [a1, a2, {"type": "end_turn"}]
    assert "think_ms" in entries[0] and all("think_ms" not in e for e in entries[1:])
    assert [("hash" in e) for e in entries] == [False, False, True]
    assert entries[2]["hash"] == s.state.hash() and len({e["t_ms"] for e in entries}) == 1
    assert json.loads(s.log_json()) == s.log
    # A malformed map after a legal action: the action before it stands.
    st = s.state.clone()
    b1 = st.legal_actions()[0].to_dict()
    outs = s.submit(1, [b1, {"type": "fly"}], clock.advance(2))
    (res,) = of_type(outs, "result", 1)
    assert (res["accepted"], res["error"]) == (1, "bad_action") and res["message"].startswith("action 1: ")
    assert s.log[-1]["action"] == b1 and s.to_move == 1
    # An illegal action second: the one before it stands, the state as it left it.
    st = s.state.clone()
    c1 = st.legal_actions()[0].to_dict()
    st.apply(c1)
    after = st.to_json()
    outs = s.submit(1, [c1, {"type": "attack", "from": [0, 0], "to": [0, 1]}, c1], clock.advance(2))
    (res,) = of_type(outs, "result", 1)
    assert (res["accepted"], res["error"]) == (1, "illegal_action")
    assert res["message"].startswith("action 1: ")
    assert s.state.to_json() == after and json.loads(s.log_json()) == s.log


def test_swap_card_hides_the_card_from_the_opponent() -> None:
    clock = FakeClock()
    s = session(clock)
    s.start(clock())
    swap = next(a.to_dict() for a in s.state.legal_actions() if a.to_dict()["type"] == "swap_card")
    outs = s.submit(0, [swap], clock.advance(1))
    (ev,) = of_type(outs, "event", 1)
    assert ev["action"] == {"type": "swap_card"} and ev["seat"] == 1
    assert s.log[-1]["action"] == swap  # the replay keeps it


def test_late_turn_ends_then_forfeit() -> None:
    clock = FakeClock()
    s = session(clock, tc="100ms,lag=10ms", policy=Policy(max_late=2))
    s.start(clock())
    clock.advance(105)
    assert s.tick(clock()) == []  # within the lag allowance
    assert s.next_deadline() == pytest.approx(100.0 + 0.110)
    clock.advance(6)
    outs = s.tick(clock())
    assert of_type(outs, "event", 0) == of_type(outs, "event", 1) == [
        {"type": "event", "game_id": "g1", "seat": 1, "kind": "timeout"}]
    assert of_type(outs, "your_turn", 1)
    assert s.log[-1]["auto"] is True and s.to_move == 1
    outs = s.submit(1, [{"type": "end_turn"}], clock.advance(5))
    # A message arriving after the deadline is refused whole: the second late turn loses.
    late = s.state.legal_actions()[0].to_dict()
    outs = s.submit(0, [late], clock.advance(500))
    assert of_type(outs, "result", 0)[0]["error"] == "timeout"
    assert of_type(outs, "event", 1)[0]["kind"] == "timeout"
    assert s.outcome is not None and s.outcome.reason == Reason.TIMEOUT and s.outcome.winner == 1
    assert resimulate(s.replay()).plies == 2


def test_a_late_turn_the_clock_ends_is_data() -> None:
    """`expire` knows no messages: nothing due is None; a late turn is its seat and what the
    clock did (`Played`: nothing applied, nothing refused, the timeout told after what is
    held, the other seat prompted); a game lost on time is None (game_over comes later)."""
    clock = FakeClock()
    s = session(clock, tc="100ms,lag=10ms", policy=Policy(max_late=2))
    s.start(clock())
    assert s.expire(clock.advance(105)) is None  # within the lag allowance
    seat, p = s.expire(clock.advance(6)) or (None, None)
    assert seat == 0 and p is not None
    assert (p.accepted, p.refused, p.late, p.prompted, p.over) == (0, None, ([], []), 1, False)
    s.submit(1, [{"type": "end_turn"}], clock.advance(5))
    seat, p = s.expire(clock.advance(200)) or (None, None)
    assert seat == 0 and p is not None and p.over and p.prompted == -1
    assert s.outcome is not None and s.outcome.reason == Reason.TIMEOUT
    assert s.expire(clock.advance(200)) is None


def test_late_forfeit_policy_and_bank() -> None:
    clock = FakeClock()
    s = session(clock, tc="100ms,bank=300ms,lag=0ms", policy=Policy(late=LatePolicy.FORFEIT))
    s.start(clock())
    outs = s.submit(0, [{"type": "end_turn"}], clock.advance(250))  # 150 ms from the bank
    assert not s.finished
    (yt,) = of_type(outs, "your_turn", 1)
    clock.advance(10)
    s.submit(1, [{"type": "end_turn"}], clock())
    assert s.seats[0].clock.bank_ms == pytest.approx(150)
    assert s.tick(clock.advance(200)) == []
    s.tick(clock.advance(60))
    assert s.outcome is not None and s.outcome.reason == Reason.TIMEOUT and s.outcome.winner == 1


def test_thinking_time_apart_from_transport() -> None:
    clock = FakeClock()
    s = session(clock, tc="1s,lag=20ms")
    s.start(clock())
    s.submit(0, [{"type": "end_turn"}], clock.advance(100), transport_ms=4)
    rep = s.clock_report()
    assert rep["think_ms"][0] == pytest.approx(96) and rep["transport_ms"][0] == pytest.approx(4)
    assert s.log[0]["think_ms"] == pytest.approx(96)


def test_disconnect_grace_then_forfeit() -> None:
    clock = FakeClock()
    s = session(clock, tc="inf", policy=Policy(disconnect_grace_ms=1000))
    s.start(clock())
    outs = s.disconnect(0, clock.advance(1))
    assert of_type(outs, "event", 1)[0]["kind"] == "disconnect"
    assert s.next_deadline() == pytest.approx(clock() + 1.0)
    outs = s.reconnect(0, clock.advance(500))
    assert of_type(outs, "game_start", 0) and of_type(outs, "your_turn", 0)
    assert of_type(outs, "event", 1)[0]["kind"] == "reconnect"
    s.disconnect(1, clock.advance(1))
    assert s.tick(clock.advance(999)) == [] and not s.finished
    s.tick(clock.advance(2))
    assert s.outcome is not None and s.outcome.reason == Reason.DISCONNECT and s.outcome.winner == 0


def test_resign_and_game_over_messages() -> None:
    clock = FakeClock()
    s = session(clock)
    s.start(clock())
    s.resign(1, clock.advance(1))  # out of turn is fine
    assert s.outcome is not None and s.outcome.winner == 0 and s.outcome.reason == Reason.RESIGN
    outs = s.game_over_messages(12)
    assert [_wire(o.msg) for o in outs] == [{"type": "game_over", "game_id": "g1", "winner": 1,
                                             "reason": "resign", "replay_id": "12"}] * 2
    assert of_type(s.submit(0, [{"type": "end_turn"}], clock()), "result")[0]["error"] == "unknown_game"
    rp = s.replay()
    assert rp["tags"]["Result"] == "1-0" and resimulate(rp).reason == "resign"


UNITS = ["knight", "archer", "cleric", "wizard", "ninja"]


def _variants(seed: int) -> tuple[dict[str, Any], dict[str, Any], str, str, str] | None:
    """The initial state of `seed` and a variant in which player 2 holds unit card `d`
    instead of its unit card `x` (swapped with its deck); `common` is a unit card in both."""
    st = Game("heroes", {"map": "a"}).new_state(seed).to_json()
    hand, deck = st["hands"]["2"], st["decks"]["2"]
    units = [c for c in dict.fromkeys(hand) if c in UNITS]
    missing = [c for c in UNITS if c not in hand and deck.get(c, 0) > 0]
    if len(units) < 2 or not missing:
        return None
    common, x, d = units[0], units[1], missing[0]
    var = json.loads(json.dumps(st))
    var["hands"]["2"].remove(x)
    var["hands"]["2"].append(d)
    vd = var["decks"]["2"]
    vd[d] -= 1
    vd[x] = vd.get(x, 0) + 1
    var["decks"]["2"] = {k: v for k, v in vd.items() if v}
    return st, var, common, x, d


def test_non_interference_of_hidden_cards() -> None:
    """Two games that differ only in player 2's hidden hand (and so its deck) send player
    1 the same bytes until player 2 plays the differing card, although player 2 plays a
    shared card and draws a hidden one first; then the difference shows (so the comparison
    can fail)."""
    found = next(v for v in map(_variants, range(1, 200)) if v)
    base, var, common, x, d = found
    streams: list[list[bytes]] = []
    for start, hidden in ((base, x), (var, d)):
        clock = FakeClock()
        s = session(clock, start_state=start, seed=99)
        seen: list[bytes] = []
        outs = s.start(clock())
        rng = random.Random(5)
        turn = 0
        while not s.finished and turn < 12:
            seen += [json.dumps(o.msg.to_wire()).encode() for o in outs if o.seat == 0]
            if s.to_move == 0:
                legal = of_type(outs, "your_turn", 0)[0]["legal"]
                outs = s.submit(0, [rng.choice(legal), {"type": "end_turn"}], clock.advance(2))
            else:
                card = common if turn == 1 else hidden if turn == 9 else None
                plays = [a.to_dict() for a in s.state.legal_actions()
                         if a.to_dict()["type"] == "deploy" and a.to_dict()["card"] == card][:1]
                assert plays or card is None
                outs = s.submit(1, plays + [{"type": "end_turn"}], clock.advance(2))
            turn += 1
        seen += [json.dumps(o.msg.to_wire()).encode() for o in outs if o.seat == 0]
        streams.append(seen)
    a, b = streams
    first_diff = next(i for i, (p, q) in enumerate(zip(a, b, strict=False)) if p != q)
    assert first_diff > 10  # game_start, 5 turns of player 1, a deploy and a draw of player 2
    assert json.loads(a[first_diff])["action"]["card"] == x
    assert json.loads(b[first_diff])["action"]["card"] == d


def test_search_info_is_added_up_per_turn_and_changes_nothing() -> None:
    clock = FakeClock()
    s = session(clock)
    s.start(clock())
    assert s.search_report() == [None, None]
    # Seat 0 plays its turn in two messages, each with what its search did; seat 1 sends none.
    clock.advance(5)
    first = next(a.to_dict() for a in s.state.legal_actions() if a.to_dict()["type"] != "end_turn")
    outs = s.submit(0, [first], clock(), info={"iterations": 100, "time_ms": 4.0, "nodes": 7})
    assert of_type(outs, "result", 0)[0]["accepted"] == 1
    clock.advance(5)
    s.submit(0, [{"type": "end_turn"}], clock(), info={"iterations": 50, "time_ms": 3.5, "string": "x"})
    clock.advance(5)
    s.submit(1, [{"type": "end_turn"}], clock())
    clock.advance(5)
    move = next(a.to_dict() for a in s.state.legal_actions() if a.to_dict()["type"] != "end_turn")
    s.submit(0, [move], clock(), info={"iterations": 30, "time_ms": 1.5})
    assert s.search_report() == [{"turns": 1, "iterations_per_turn": 150.0, "time_ms_per_turn": 7.5}, None]
    s.resign(1, clock())  # the turn under way counts once the game is over
    rep = s.replay()
    assert rep["search"] == [{"turns": 2, "iterations_per_turn": 90.0, "time_ms_per_turn": 4.5}, None]
    assert rep["actions"][0]["info"] == {"iterations": 100, "time_ms": 4.0, "nodes": 7}
    check = resimulate(json.loads(json.dumps(rep)))  # the replay still re-simulates
    assert check.plies == len(s.log)


def test_info_of_a_late_message_is_not_counted() -> None:
    clock = FakeClock()
    s = session(clock, tc="100ms")
    s.start(clock())
    clock.advance(500)
    outs = s.submit(0, [{"type": "end_turn"}], clock(), info={"iterations": 10**6, "time_ms": 499.0})
    assert of_type(outs, "result", 0)[0]["error"] == "timeout"
    clock.advance(5)
    s.submit(1, [{"type": "end_turn"}], clock(), info={"iterations": 3, "time_ms": 1.0})
    s.resign(0, clock())
    assert s.search_report() == [None, {"turns": 1, "iterations_per_turn": 3.0, "time_ms_per_turn": 1.0}]


def test_a_resignation_returns_what_happened_as_data() -> None:
    """`resign` knows no messages: None when the seat resigned (nothing to tell before
    `game_over`), the refusal and why once the game is over (the seat's connection writes
    it as an `error`)."""
    clock = FakeClock()
    s = session(clock)
    s.start(clock())
    assert s.resign(0, clock.advance(1)) is None
    assert s.outcome is not None and s.outcome.winner == 1
    assert s.resign(1, clock()) == Refusal(ErrorCode.UNKNOWN_GAME, "the game is over")
    assert s.outcome.winner == 1 and s.outcome.reason == Reason.RESIGN  # (unchanged)
