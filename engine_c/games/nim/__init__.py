"""nim: multi-action Nim, the registry's smallest game (README.md): the rules in nim.c, the
Python codec in codec.py, the JSON Schema of its actions and observations in schema.py, the
fixed action table for maag.rl in spaces.py, its own tests in tests/."""

from ...registry import spec_of
from . import codec, schema

SPEC = spec_of("nim", "multi-action Nim: take from up to `ap` piles a turn; taking the last object wins",
               "nm_state", codec, schema=schema)
