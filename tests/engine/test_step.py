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
