"""cards: the Hearthstone-like card game of spec/cards.md (README.md): the rules in C
(cards_rules.c, cards_legal.c, cards_state.c), the card data in pool.py and decks.py
(compiled into cards_tables.h by gen_tables.py), the Python codec in codec.py, the text view
and the web view's card table in view.py, the trace replayer in conformance.py, the bot kit's
situations in kit.py, the JSON Schema of its actions and observations in schema.py, the
fixed action table for maag.rl in spaces.py, its own tests in tests/."""

from ...registry import spec_of
from . import codec, kit, schema, view
from .conformance import check_record

SPEC = spec_of("cards", "a Hearthstone-like card game: Mage and Paladin, 64 cards, hidden hands, "
               "random draws", "cd_state", codec, schema=schema,
               conformance=check_record, render=view.render,
               chance_within_turn=True,
               describe=view.describe, situations=kit.situations,
               catalog=view.catalog)
