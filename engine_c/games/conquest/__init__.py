"""conquest: the TripleA-like grand strategy game of spec/conquest.md (README.md): the rules
in C (conquest_rules.c, conquest_state.c), map files in mapfile.py and maps/, the Python
codec in codec.py, the trace replayer in conformance.py, the text view in view.py, the bot
kit's situations in kit.py, the thesis's action abstraction as grouped legal actions in
groups.py, the agents in agents.py (C: conquest_search.c, conquest_pro.c), the JSON Schema
of its actions and observations in schema.py, the fixed action table for maag.rl in
spaces.py, its own tests in tests/."""

from ...registry import spec_of
from . import codec, kit, schema
from .conformance import check_record
from .groups import groups_json
from .view import describe, render

SPEC = spec_of("conquest", "a TripleA-like grand strategy game: whole armies move, dice decide battles",
               "cq_state", codec, schema=schema,
               conformance=check_record, render=render, describe=describe,
               situations=kit.situations, groups=groups_json, wire_names=codec.wire_names)
