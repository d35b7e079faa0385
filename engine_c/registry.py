"""The registry of games. engine_c/games/games.def lists them (`MG_GAME(name)`, one line a
game); each lives in its folder engine_c/games/<name>/ and its Python package
`maag.engine.games.<name>` defines one `SPEC`, a `GameSpec`: the game's options with their
defaults, its action dicts and its reader of JSON positions, what an opponent may see of each
action, and optionally its conformance replayer and bot-kit situations. A state's JSON form
has no entry here: the game's C writer (`mg_game_vt.write_msgpack`) is its only serializer,
and `State.to_json` decodes what it writes. Generic code (the wrapper, the referee, the
command line, the bot kit) asks the registry and never names a game.

    >>> from maag.engine import registry
    >>> registry.names()
    ['heroes', ...]
    >>> registry.get("heroes").options[0].name
    'map'

`names()` only reads games.def: it does not load the C core, so a command line can list
the games cheaply."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["GameOption", "GameSpec", "Situation", "names", "default", "get", "spec_of", "GAMES_DEF"]

GAMES_DEF = Path(__file__).resolve().parent / "games" / "games.def"


@dataclass(frozen=True, slots=True)
class GameOption:
    """One configuration key of a game, for help texts and for checking names early (the
    game's `make_config` checks values, its C `init` checks ranges)."""

    name: str
    type: type
    default: Any
    """The default value, or None when it follows from other options (`help` says how)."""
    help: str
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True, slots=True)
class Situation:
    """One scripted situation of the bot kit (`maag bot check`): the bot under test takes
    `bot_seat` (1 or 2) from `start` (a full state's JSON; None: a new game). `check`, if
    set, reads how the game went (a map with `winner` 1, 2 or None, `reason`, `seat` and
    `prompts`, the number of times the bot was asked to move) and returns a note."""

    name: str
    what: str
    bot_seat: int
    start: dict[str, Any] | None
    check: Callable[[Mapping[str, Any]], str] | None = None


def _public(action: dict[str, Any]) -> dict[str, Any]:
    return action


@dataclass(frozen=True)
class GameSpec:
    """Everything generic code needs to know of one game beyond its C interface."""

    name: str
    summary: str
    state_ctype: str
    """The C struct of a state (and of an observation), for `State.cdata`."""
    options: tuple[GameOption, ...]
    make_config: Callable[[dict[str, Any]], dict[str, Any]]
    """Complete a configuration with its defaults; ValueError naming a bad key or value."""
    fill_config: Callable[[dict[str, Any], Any], None]
    """Write a complete configuration into the game's C config struct."""
    action_to_dict: Callable[[int], dict[str, Any]]
    action_from_dict: Callable[[dict[str, Any]], int]
    """The action code of a readable action; ValueError naming the bad field."""
    state_from_json: Callable[[dict[str, Any], dict[str, Any], Any], None]
    """Fill a zeroed state buffer from JSON (the configuration gives missing keys);
    StateError naming the field."""
    public_action: Callable[[dict[str, Any]], dict[str, Any]] = _public
    """What the opponent may see of an action the seat to move played (its dict form)."""
    unseen: Callable[[dict[str, Any]], dict[str, int]] | None = None
    """From an observation's JSON, the hidden items the observer has not seen (for
    `Observation.unseen`); None for a game without hidden information."""
    conformance: Callable[[dict[str, Any]], list[str]] | None = None
    """Replay one record of a reference trace; the differences found (empty: it matches)."""
    situations: Callable[[dict[str, Any], int], list[Situation]] | None = None
    """The bot kit's scripted situations for a configuration and a seed."""
    chance_within_turn: bool = False
    """Actions inside a turn can have random outcomes (the card game's draws and random
    targets): a turn planned ahead may turn illegal, so the bundled bots send one action
    at a time and plan again."""
    render: Callable[[dict[str, Any]], str] | None = None
    """A state's or observation's JSON as a few lines of text (`maag replay --show`)."""
    describe: Callable[[dict[str, Any], dict[str, Any]], str] | None = None
    """An action in words, read against the JSON of the state it was played in."""
    action_schema: dict[str, Any] | None = None
    """The JSON Schema (2020-12) of an action map, as sent and as an opponent sees it."""
    observation_schema: dict[str, Any] | None = None
    """The JSON Schema of an observation map (`your_turn.observation`)."""
    group_schema: dict[str, Any] | None = None
    """The JSON Schema of one group of `groups` (refers to the action as #/$defs/action)."""
    groups: Callable[[Any], list[dict[str, Any]]] | None = None
    """The grouped legal actions at a `State`: the game's action abstraction, each group a map
    with `options`, each option a map with `actions` (action maps, legal in that order), in
    the protocol's form (`your_turn.groups`). None: the game groups nothing."""
    layout: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """The fixed board of a complete configuration, for drawing it (the web view): a JSON map
    that the game's drawing module reads (heroes: `width`, `height` and `squares`, the special
    squares as maps `x`, `y`, `kind`; conquest: the territories' places, the borders, the
    capitals). None: the game has no board to draw beyond its state's JSON."""
    catalog: Callable[[], dict[str, Any]] | None = None
    """The game's fixed display data, the same for every configuration and every position (the
    card game: each card's name, cost, type, stats and text, the heroes' powers): a JSON map
    the web view fetches once (`GET /api/catalog/GAME`) instead of with every frame. None: the
    game has none."""

    wire_names: Callable[[], Sequence[str]] | None = None
    """The name table the game's C `write_msgpack` reads names from, by number, when its names
    live in this codec (conquest's interned territory, player and unit-type names); None for
    a game whose C knows its names. The table may grow; it is passed afresh when it does."""

    def option(self, name: str) -> GameOption:
        for o in self.options:
            if o.name == name:
                return o
        known = ", ".join(o.name for o in self.options)
        raise ValueError(f"{self.name} has no option {name!r}; known: {known}")

    @property
    def value_scale(self) -> float:
        """What `evaluate` gives the winner of a finished game (from the C interface)."""
        from ._lowlevel import lib

        return float(lib.mg_game_find(self.name.encode()).value_scale)


def spec_of(name: str, summary: str, state_ctype: str, codec: Any, schema: Any = None,
            **more: Any) -> GameSpec:
    """The GameSpec of a game whose codec module defines OPTIONS, make_config, fill_config,
    action_to_dict, action_from_dict and state_from_json (and, if the game has them,
    public_action, unseen and layout), and whose schema module (if given) defines ACTION,
    OBSERVATION and optionally GROUP; `more` gives the other fields. A codec writes no state:
    tests/engine/test_one_serializer.py fails if one does."""
    optional = {k: getattr(codec, k) for k in ("public_action", "unseen", "layout") if hasattr(codec, k)}
    if schema is not None:
        optional.update(action_schema=schema.ACTION, observation_schema=schema.OBSERVATION,
                        group_schema=getattr(schema, "GROUP", None))
    return GameSpec(name=name, summary=summary, state_ctype=state_ctype, options=codec.OPTIONS,
                    make_config=codec.make_config, fill_config=codec.fill_config,
                    action_to_dict=codec.action_to_dict, action_from_dict=codec.action_from_dict,
                    state_from_json=codec.state_from_json,
                    **optional, **more)


@cache
def names() -> list[str]:
    """The registered games, in games.def order. Reads that file only."""
    found = re.findall(r"^MG_GAME\((\w+)\)", GAMES_DEF.read_text(), flags=re.M)
    if not found:
        raise RuntimeError(f"{GAMES_DEF}: no MG_GAME(name) line")
    return found


def default() -> str:
    """The game commands play when none is named: the first line of games.def."""
    return names()[0]


@cache
def get(name: str) -> GameSpec:
    """The spec of a registered game; ValueError listing the known ones otherwise."""
    if name not in names():
        raise ValueError(f"unknown game {name!r}; known: {', '.join(names())}")
    spec = importlib.import_module(f"{__package__}.games.{name}").SPEC
    if not isinstance(spec, GameSpec) or spec.name != name:
        raise RuntimeError(f"maag.engine.games.{name}.SPEC must be the GameSpec of {name!r}")
    return spec
