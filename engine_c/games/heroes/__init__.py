"""heroes: a Hero Academy clone (the Council team), per ../shared/spec/heroes.md. The rules
are in C in this folder (heroes_state.c: setup, draws, hash, observation and the
`mg_heroes_vt` interface record; heroes_rules.c: legal actions and their effects;
heroes_eval.c: the reference's heuristic, rating and pruner; heroes_hidden.c:
determinization strategies); codec.py is the Python side (options, action dicts, JSON);
conformance.py replays the reference's traces; kit.py scripts the bot kit's situations."""

from ...registry import spec_of
from . import codec, conformance, kit, schema

SPEC = spec_of("heroes", "Hero Academy: 5 action points a turn on a 9x5 board, hidden hands, random draws",
               "hr_state", codec, schema=schema,
               conformance=conformance.check_record, situations=kit.situations)
