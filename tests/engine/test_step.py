"""`State.step` (mg_step, the referee's one crossing per act) says what `apply_code` and the
queries after it say: the turn ended, the game over, who acts next; a seat not to move
changes nothing; an illegal action raises as `apply_code` does and changes nothing."""

from __future__ import annotations

import random

import pytest
from maag.engine import Game, IllegalActionError, State, registry
from maag.engine._lowlevel import lib


def test_the_flags_are_the_cores() -> None:
    assert (State.STEP_END_TURN, State.STEP_TERMINAL, State.STEP_CURRENT_1, State.STEP_NOT_TO_MOVE) == (
        lib.MG_STEP_END_TURN, lib.MG_STEP_TERMINAL, lib.MG_STEP_CURRENT_1, lib.MG_STEP_NOT_TO_MOVE)


@pytest.mark.parametrize("name", registry.names())
def test_step_is_apply_and_the_queries_after_it(name: str) -> None:
    g = Game(name)
    rng = random.Random(7)
    for seed in range(3):
        st = g.new_state(seed)
        ref = st.clone()
        plies = 0
        while not st.is_terminal and plies < 400:
            mover = st.current_player
            legal = st.legal_codes()
            # The other seat: nothing applied.
            before = st.to_bytes()
            assert st.step(1 - mover, legal[0]) == State.STEP_NOT_TO_MOVE
            assert st.to_bytes() == before
            # An illegal code (none of the legal ones): raises, nothing applied.
            bad = next(c for c in range(max(legal) + 2) if c not in legal)
            with pytest.raises(IllegalActionError):
                st.step(mover, bad)
            assert st.to_bytes() == before
            code = rng.choice(legal)
            flags = st.step(mover, code)
            ref.apply_code(code)
            assert st.to_bytes() == ref.to_bytes()
            assert bool(flags & State.STEP_END_TURN) == bool(g.vt.is_end_turn(code))
            assert bool(flags & State.STEP_TERMINAL) == ref.is_terminal
            if not ref.is_terminal:
                assert (1 if flags & State.STEP_CURRENT_1 else 0) == ref.current_player
            assert not flags & State.STEP_NOT_TO_MOVE
            plies += 1
        assert plies > 0


def _plan_by_steps(st: State, seat: int, codes: list[int]) -> tuple[int, int, int]:
    """What `step_plan` is to return, from `step` one code at a time."""
    flags = 0
    for i, code in enumerate(codes):
        try:
            f = st.step(seat, code)
        except IllegalActionError as e:
            return i, flags, e.code
        if f & State.STEP_NOT_TO_MOVE:
            return i, f, 0
        flags = f
        if f & (State.STEP_END_TURN | State.STEP_TERMINAL):
            return i + 1, flags, 0
    return len(codes), flags, 0


@pytest.mark.parametrize("name", registry.names())
def test_step_plan_is_step_after_step(name: str) -> None:
    """A plan (a turn's actions in one call) does what `step` one action at a time does: it
    stops after the end_turn or the game's end, before an illegal action (whose status it
    returns, `check` raising it as `apply` would), the rest not applied."""
    g = Game(name)
    rng = random.Random(11)
    kinds = {"whole": 0, "past_end": 0, "illegal": 0, "other_seat": 0}
    for seed in range(3):
        st = g.new_state(seed)
        plies = 0
        while not st.is_terminal and plies < 300:
            mover = st.current_player
            # A plan played on a copy: legal actions up to (often) the end of the turn ...
            scratch, plan = st.clone(), []
            while not scratch.is_terminal and scratch.current_player == mover and len(plan) < 12:
                code = rng.choice(scratch.legal_codes())
                scratch.apply_code(code)
                plan.append(code)
                if g.vt.is_end_turn(code) and rng.random() < 0.5:
                    break
            kind = rng.choice(list(kinds))
            seat = mover
            if kind == "past_end":  # ... and more after it
                plan += plan[:2]
            elif kind == "illegal":  # ... or one that is legal nowhere in it
                legal = st.legal_codes()
                nowhere = next(c for c in range(max(legal) + 2) if c not in legal)
                plan.insert(rng.randrange(len(plan) + 1), nowhere if rng.random() < 0.5 else 0xFFFFFFF)
            elif kind == "other_seat":
                seat = 1 - mover
            kinds[kind] += 1
            ref = st.clone()
            want = _plan_by_steps(ref, seat, plan)
            got = st.step_plan(seat, plan)
            assert got == want, (plan, got, want)
            assert st.to_bytes() == ref.to_bytes()
            if got[2]:
                with pytest.raises(IllegalActionError):
                    st.check(got[2])
            if got[0] == 0:  # (nothing applied: the game goes on with a plan of one legal action)
                st.step(mover, rng.choice(st.legal_codes()))
            plies += 1
    assert all(kinds.values()), kinds


def test_a_plan_longer_than_the_threads_buffer() -> None:
    g = Game("heroes")
    st = g.new_state(5)
    mover = st.current_player
    legal = [c for c in st.legal_codes() if not g.vt.is_end_turn(c)]
    before = st.to_bytes()
    # 2000 codes, the first illegal: nothing applied, its status returned.
    bad = next(c for c in range(max(legal) + 2) if c not in st.legal_codes())
    assert st.step_plan(mover, [bad] * 2000)[:1] == (0,)
    assert st.to_bytes() == before
    applied, _flags, status = st.step_plan(mover, [legal[0]] + [bad] * 1999)
    assert applied == 1 and status != 0
