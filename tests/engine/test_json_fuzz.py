"""Fuzzing every game's JSON import: states, observations and actions, as a bot or an
operator could send them (a start state, `maag replay --at N --json` edited by hand, an
action map in a `turn`).

Each example takes a real position of the game (random play from a random seed), turns it
to JSON, mutates it (a leaf replaced by a value of another kind or an extreme one, a key
removed or added, a list cut or grown) and imports it. The only acceptable failure is a
ValueError naming what is wrong (the engine's StateError is one); a state that is accepted
must be usable: its legal actions apply, it exports to JSON again, and a random playout
ends. An action map that imports is either legal and applies, or illegal and leaves the
state unchanged.

A fixed number of examples per game in CI (MAAG_FUZZ_EXAMPLES raises it; docs/fuzzing.md
records a longer run). These run in the sanitizer build too (tests/engine/test_sanitizer.py).
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maag.engine import Game, IllegalActionError, State, registry

T = TypeVar("T")
EXAMPLES = int(os.environ.get("MAAG_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("MAAG_FUZZ_EXAMPLES"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31 - 1, 2**31, 2**63 - 1, 2**64, -(2**63)]),
    st.floats(allow_nan=False), st.text(max_size=12), st.lists(st.integers(-3, 40), max_size=12),
    st.dictionaries(st.text(max_size=6), st.integers(-3, 40), max_size=4),
)


def position(game: Game, seed: int) -> State:
    """A state somewhere in a random game."""
    rng = random.Random(seed)
    s = game.new_state(seed)
    for _ in range(rng.randrange(0, 120)):
        if s.is_terminal:
            break
        s.apply(rng.choice(s.legal_codes()))
    return s


def paths(obj: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside `obj` (dict keys and list indices)."""
    out = [here]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, (*here, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += paths(v, (*here, i))
    return out


def mutate(obj: Any, data: st.DataObject) -> Any:
    """`obj` with one to three random mutations."""
    obj = copy.deepcopy(obj)
    for _ in range(data.draw(st.integers(1, 3))):
        ps = paths(obj)
        path = data.draw(st.sampled_from(ps[1:] if len(ps) > 1 else ps))
        parent = obj
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1] if path else None
        kind = data.draw(st.sampled_from(["replace", "delete", "add", "grow"]))
        if key is None:
            return data.draw(ODD_VALUES)
        if kind == "replace":
            parent[key] = data.draw(ODD_VALUES)
        elif kind == "delete":
            del parent[key]
        elif kind == "add" and isinstance(parent, dict):
            parent[data.draw(st.text(max_size=8))] = data.draw(ODD_VALUES)
        elif kind == "grow" and isinstance(parent[key], list):
            parent[key] = parent[key] * data.draw(st.integers(0, 40))
        else:
            parent[key] = data.draw(ODD_VALUES)
    return obj


def check_usable(s: State) -> None:
    again = s.to_json()
    assert isinstance(again, dict)
    codes = s.legal_codes()
    if codes:
        t = s.clone()
        t.apply(codes[0])
    s.clone().random_playout(max_actions=20_000)


def imported(fn: Callable[..., T], *args: Any) -> T | None:
    """fn(*args), or None when it refuses its input with a ValueError that says why (the
    only refusal allowed: any other exception fails the test)."""
    try:
        return fn(*args)
    except ValueError as e:
        assert str(e)
        return None


@pytest.mark.parametrize("name", registry.names())
@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_a_mutated_state_is_refused_with_a_value_error_or_usable(name: str, data: st.DataObject,
                                                                 seed: int) -> None:
    game = Game(name, {})
    s = imported(game.state_from_json, mutate(position(game, seed).to_json(), data))
    if s is not None:
        check_usable(s)


@pytest.mark.parametrize("name", registry.names())
@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_a_mutated_observation_is_refused_with_a_value_error_or_usable(name: str, data: st.DataObject,
                                                                       seed: int) -> None:
    game = Game(name, {})
    s = position(game, seed)
    seen = s.observation(data.draw(st.sampled_from([0, 1]))).to_json()
    o = imported(game.state_from_json, mutate(seen, data))
    if o is None:
        return
    assert isinstance(o.to_json(), dict)
    # An observation is played on through a determinization of what it hides (unless the
    # mutation removed `observer`: then it is a full state).
    full = o if o.observer is None else imported(o.determinize, seed)
    if full is not None:
        check_usable(full)


@pytest.mark.parametrize("name", registry.names())
@FUZZ
@given(data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_a_mutated_action_is_refused_or_legal_or_leaves_the_state_unchanged(name: str, data: st.DataObject,
                                                                            seed: int) -> None:
    game = Game(name, {})
    s = position(game, seed)
    if s.is_terminal:
        return
    base = s.legal_actions()[data.draw(st.integers(0, len(s.legal_codes()) - 1))].to_dict()
    a = imported(game.action, mutate(base, data))
    if a is None:
        return
    before = s.to_json()
    if s.is_legal(a):
        s.apply(a)
        check_usable(s)
    else:
        with pytest.raises(IllegalActionError):
            s.apply(a)
        assert s.to_json() == before
