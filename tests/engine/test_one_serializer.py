"""One serializer per game state (issue 57): the game's C writer (`mg_game_vt.write_msgpack`,
<game>_wire.c) is the only code that writes a state's or an observation's keys. The JSON
form that watchers, the web view, replays and the tools read (`State.to_json`) is its bytes
decoded, and each game's codec.py only reads JSON positions.

The tests fail if a second copy of the keys comes back: a codec (or the registry) that
writes a state again, or a JSON form that is not the decoded wire form; and they check, on
hypothesis's random positions of every game and configuration, that the observation the
referee sends carries nothing its seat may not see."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import random
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maag.engine import Game, Observation, State, registry

REPO = Path(__file__).resolve().parents[2]
GAMES = registry.names()
EXAMPLES = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

# Configurations beyond the defaults, so that the writers' every name table is reached
# (heroes' maps, decks and draws; the card game's decks; nim's pile counts and misère).
CONFIGS: dict[str, list[dict[str, Any]]] = {
    "heroes": [{}, {"map": "a-small"}, {"map": "a-tiny", "draws": "seeded"},
               {"map": "a", "deck": "small", "ap": 3}],
    "cards": [{}, {"deck1": "X", "deck2": "random"}, {"deck1": "random", "deck2": "M"}],
    "conquest": [{}, {"victory": "capital+annihilation", "rounds": 6}],
    "nim": [{}, {"piles": "1,15,0,7,2,9,4,3", "ap": 3, "misere": True}],
}


def configs(name: str) -> list[dict[str, Any]]:
    return CONFIGS.get(name, [{}])


def position(game: Game, seed: int, steps: int) -> State:
    """The state after `steps` random actions (fewer if the game ends) from `seed`'s deal."""
    rng = random.Random(seed)
    s = game.new_state(seed)
    for _ in range(steps):
        if s.is_terminal:
            break
        s.apply(rng.choice(s.legal_codes()))
    return s


def decoded(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)


@pytest.mark.parametrize("name", GAMES)
@EXAMPLES
@given(data=st.data())
def test_the_json_form_is_the_decoded_wire_form_in_its_smallest_encoding(name: str, data: Any) -> None:
    """For a full state and both seats' observations (as the referee makes them: through the
    Game's scratch observation, and inside `your_turn`'s frame), the JSON form is the writer's
    bytes decoded, and those bytes are what msgpack-python makes of it (each value in its
    smallest form): one form, whichever side a consumer reads."""
    cfg = data.draw(st.sampled_from(configs(name)), label="config")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    steps = data.draw(st.integers(0, 300), label="steps")
    s = position(Game(name, cfg), seed, steps)
    for view in (s, s.observation(0), s.observation(1)):
        wire = view.to_msgpack()
        assert view.to_json() == decoded(wire)
        assert msgpack.packb(view.to_json(), use_bin_type=True) == wire
        if view.observer is not None:  # (the bots' and agents' face of it)
            assert Observation.of(view).to_json() == decoded(wire)
    for seat in (0, 1):
        wire = s.observation(seat).to_msgpack()
        assert s.observation_msgpack(seat) == wire
        frame = s.prompt_msgpack(seat, b"\x81\xa1o", b"", b"", legal=False)  # {"o": observation}
        assert decoded(frame[4:]) == {"o": s.observation(seat).to_json()}


@pytest.mark.parametrize("name", [n for n in GAMES if registry.get(n).unseen is not None])
@EXAMPLES
@given(data=st.data())
def test_the_observation_sent_is_the_same_whatever_the_hidden_cards(name: str, data: Any) -> None:
    """Full states that differ only in what a seat may not see (determinizations of its
    observation: other hands, other decks, other seeds) give that seat the very same bytes
    and JSON, through the referee's path too: no hidden card reaches the wire."""
    cfg = data.draw(st.sampled_from(configs(name)), label="config")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    s = position(Game(name, cfg), seed, data.draw(st.integers(0, 200), label="steps"))
    seat = data.draw(st.sampled_from([0, 1]), label="seat")
    obs = Observation.of(s, seat)
    want = s.observation_msgpack(seat)
    for k in range(6):
        other = obs.determinize(seed + k)
        assert other.observation_msgpack(seat) == want
        assert other.observation(seat).to_json() == obs.to_json()


# ---- the reader follows the writer -------------------------------------------------------------

# Keys the C writer writes that a reader need not read: derived from the configuration
# (conquest's roster is each unit's type, fixed by the map).
DERIVED: dict[str, set[str]] = {"conquest": {"roster"}}


class Reading(dict[str, Any]):
    """A JSON map that notes which of its keys a reader asked for."""

    def __init__(self, obj: dict[str, Any]) -> None:
        super().__init__(obj)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


def unread(game: Game, obj: dict[str, Any]) -> set[str]:
    """The keys of `obj` that the game's `state_from_json` does not read (it must accept it)."""
    seen = Reading(obj)
    game.state_from_json(seen)
    return set(obj) - seen.asked - DERIVED.get(game.name, set())


@pytest.mark.parametrize("name", GAMES)
def test_the_reader_reads_every_key_the_writer_writes(name: str) -> None:
    """codec.py's reader keeps its own key names (reading a position is no second writer),
    so a key renamed in C alone would be dropped silently on the way back (a default from the
    configuration instead): every key of a state and of an observation is read."""
    game = Game(name, {})
    for steps in (0, 30):
        s = position(game, 4, steps)
        for view in (s, s.observation(0), s.observation(1)):
            assert unread(game, view.to_json()) == set(), f"{name}: written by C, never read back"
    # (a key the reader does not know is seen: what a key renamed in C alone would be)
    assert unread(game, dict(s.to_json(), renamed_in_c=1)) == {"renamed_in_c"}


# ---- no second writer ------------------------------------------------------------------------

def state_only_keys(name: str) -> set[str]:
    """The top-level keys of the game's state and observation that are neither option names
    (a configuration map may share those with the state: conquest's rounds and victory) nor
    an action's (the codec writes actions: conquest's move may "join")."""
    game = Game(name, {})
    keys: set[str] = set()
    shared = {o.name for o in registry.get(name).options}
    for steps in (0, 5, 40, 400):
        s = position(game, 3, steps)
        keys |= set(s.to_json()) | set(s.observation(0).to_json())
    rng = random.Random(3)
    for code in [*range(4096), *(rng.getrandbits(32) for _ in range(4096))]:
        try:
            shared |= set(game.spec.action_to_dict(code))
        except (ValueError, IndexError, KeyError):
            continue  # (a code no action has)
    return keys - shared


def writes_of(source: str, keys: set[str]) -> list[str]:
    """Where `source` writes a state's keys: a dict display with two or more of them, or an
    assignment to one by subscript (`out["observer"] = ...`). Reading (`obj.get("turn")`,
    `obj["board"]`) is no writing."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            ks = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(ks & keys) >= 2:
                found.append(f"line {node.lineno}: a map of {sorted(ks & keys)}")
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
              and isinstance(node.slice, ast.Constant) and node.slice.value in keys):
            found.append(f"line {node.lineno}: [{node.slice.value!r}] assigned")
    return found


@pytest.mark.parametrize("name", GAMES)
def test_the_codec_writes_no_state(name: str) -> None:
    """codec.py reads JSON positions (`state_from_json`) and writes none: no state writer in
    the module or the registry entry, no map of the state's keys built in its source."""
    codec = importlib.import_module(f"maag.engine.games.{name}.codec")
    writers = [n for n in dir(codec)
               if n.endswith("_to_json") or n.startswith(("state_to_", "observation_to_"))]
    assert writers == [], f"{name}'s codec writes states again: {writers}"
    fields = [f.name for f in dataclasses.fields(registry.GameSpec)]
    assert not [f for f in fields if f.endswith("_to_json")], "the registry takes a second state writer"
    source = (REPO / "engine_c" / "games" / name / "codec.py").read_text()
    assert writes_of(source, state_only_keys(name)) == [], \
        f"{name}'s codec.py builds a state's keys: the C writer ({name}_wire.c) is the only one"


def test_the_check_finds_a_writer_of_the_keys() -> None:
    """The source check above sees both ways a writer builds a state (so it can fail)."""
    keys = {"turn", "current", "observer"}
    assert writes_of('def f(s):\n    out = {"turn": s.turn, "current": 1}\n    return out\n', keys)
    assert writes_of('def f(out, s):\n    out["observer"] = s.observer + 1\n', keys)
    assert writes_of('def f(obj):\n    return obj.get("turn"), obj["current"]\n', keys) == []
