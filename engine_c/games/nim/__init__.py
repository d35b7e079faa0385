"""nim: multi-action Nim, the registry's smallest game (README.md): the rules in nim.c, the
Python codec in codec.py, its own tests in tests/."""

from ...registry import GameSpec
from . import codec

SPEC = GameSpec(
    name="nim",
    summary="multi-action Nim: take from up to `ap` piles a turn; taking the last object wins",
    state_ctype="nm_state",
    options=codec.OPTIONS,
    make_config=codec.make_config,
    fill_config=codec.fill_config,
    action_to_dict=codec.action_to_dict,
    action_from_dict=codec.action_from_dict,
    state_to_json=codec.state_to_json,
    state_from_json=codec.state_from_json,
)
