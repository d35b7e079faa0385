"""Each registered game's JSON Schema of actions and observations (its schema.py) holds for
what the engine produces: every observation of both seats along random games, every legal
action and what the opponent sees of it, and (conquest) every group; and it refuses
actions the codec refuses."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest
from maag.engine import Game, registry
from maag.server.referee.schema import game_schema

CONFIGS: dict[str, dict[str, Any]] = {"heroes": {"map": "a-small"}, "cards": {"deck1": "random"}}



@pytest.mark.parametrize("game", registry.names())
def test_every_game_has_shapes(game: str) -> None:
    spec = registry.get(game)
    assert spec.action_schema is not None and spec.observation_schema is not None


@pytest.mark.parametrize("game", registry.names())
@pytest.mark.parametrize("seed", [1, 2])
def test_observations_and_actions_of_random_games_fit_the_schema(game: str, seed: int) -> None:
    s = Game(game, CONFIGS.get(game, {})).new_state(seed=seed)
    schema = game_schema([game])
    obs_v = jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": "#/$defs/observation"}]})
    act_v = jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": "#/$defs/action"}]})
    group_v = jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": "#/$defs/group"}]})
    spec = s.game.spec
    rng = random.Random(seed)
    checked: set[str] = set()  # the actions found valid (canonical JSON)
    groups_checked: set[str] = set()  # the same for the groups
    for _ in range(200):
        for seat in (0, 1):
            obs = s.observation(seat).to_json()
            errors = [e.message for e in obs_v.iter_errors(obs)]
            assert not errors, (errors[:3], obs)
        if spec.groups is not None:
            for g in spec.groups(s):
                key = json.dumps(g, sort_keys=True)
                if key not in groups_checked:
                    assert group_v.is_valid(g), list(group_v.iter_errors(g))[:2]
                    groups_checked.add(key)
        if s.is_terminal:
            break
        acts = s.legal_actions()
        for a in acts:
            d = a.to_dict()
            for doc in (d, spec.public_action(d)):
                # Each distinct action once: most recur ply after ply (some 10x), and a
                # document's validity is its own (the schema's checks were most of the time).
                key = json.dumps(doc, sort_keys=True)
                if key not in checked:
                    assert act_v.is_valid(doc), (doc, [e.message for e in act_v.iter_errors(doc)][:2])
                    checked.add(key)
        s.apply(rng.choice(acts))


@pytest.mark.parametrize(("game", "bad"), [
    ("heroes", {"type": "move", "from": [0, 0]}),
    ("heroes", {"type": "deploy", "card": "dragon", "to": [0, 0]}),
    ("nim", {"type": "take", "pile": 0, "count": 0}),
    ("cards", {"type": "attack", "attacker": {"pos": 0}, "target": None}),
    ("conquest", {"type": "move", "unit": 0, "path": ["R1"]}),
    ("conquest", {"type": "end_phase", "unit": 3}),
])
def test_the_schema_refuses_what_the_codec_refuses(game: str, bad: dict[str, Any]) -> None:
    schema = game_schema([game])
    act_v = jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": "#/$defs/action"}]})
    assert not act_v.is_valid(bad)
    with pytest.raises(ValueError):
        Game(game, CONFIGS.get(game, {})).action(bad)
