"""heroes: a Hero Academy clone (the Council team), per ../shared/spec/heroes.md. The rules
are in C in this folder (heroes_state.c: setup, draws, hash, observation and the
`mg_heroes_vt` interface record; heroes_rules.c: legal actions and their effects;
heroes_eval.c: the reference's heuristic, rating and pruner; heroes_hidden.c:
determinization strategies); codec.py is the Python side (options, action dicts, JSON);
conformance.py replays the reference's traces; kit.py scripts the bot kit's situations."""

from ...registry import GameSpec
from . import codec, conformance, kit

SPEC = GameSpec(
    name="heroes",
    summary="Hero Academy: 5 action points a turn on a 9x5 board, hidden hands, random draws",
    state_ctype="hr_state",
    options=codec.OPTIONS,
    make_config=codec.make_config,
    fill_config=codec.fill_config,
    action_to_dict=codec.action_to_dict,
    action_from_dict=codec.action_from_dict,
    state_to_json=codec.state_to_json,
    state_from_json=codec.state_from_json,
    public_action=codec.public_action,
    unseen=codec.unseen,
    conformance=conformance.check_record,
    situations=kit.situations,
)
