"""The protocol's JSON Schema with the games' shapes: maag.protocol.schema's messages, whose
actions, observations and groups are those of the registered games (each game's schema.py,
through the registry). `maag protocol schema` prints it; protocol/protocol.schema.json is
its output for every game, shipped with the package and the SDK (docs/protocol.schema.json
points to it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import maag.protocol
from maag.engine import registry
from maag.protocol.schema import GENERIC_ACTION, GENERIC_OBSERVATION, message_schema

__all__ = ["SHIPPED", "game_schema", "shipped_text"]

SHIPPED = Path(maag.protocol.__file__).resolve().parent / "protocol.schema.json"
"""Where the schema of every game lives: beside maag.protocol (protocol/ in a checkout)."""


def _pick(shapes: dict[str, dict[str, Any] | None], kind: str, generic: dict[str, Any] | None,
          defs: dict[str, Any]) -> dict[str, Any] | None:
    """An anyOf over the games' shapes (each in $defs as GAME_KIND); a game without one adds
    the generic shape."""
    refs = []
    for game, shape in shapes.items():
        if shape is None:
            if generic is not None:
                refs.append(generic)
            continue
        defs[f"{game}_{kind}"] = shape
        refs.append({"$ref": f"#/$defs/{game}_{kind}"})
    if not refs:
        return None
    return refs[0] if len(refs) == 1 else {"anyOf": refs}


def game_schema(games: list[str] | None = None) -> dict[str, Any]:
    """The schema of one message, with the actions and observations of `games` (default:
    every registered game). ValueError for an unknown game."""
    names = registry.names() if games is None else list(games)
    specs = [registry.get(n) for n in names]
    defs: dict[str, Any] = {}
    action = _pick({s.name: s.action_schema for s in specs}, "action", GENERIC_ACTION, defs)
    observation = _pick({s.name: s.observation_schema for s in specs}, "observation", GENERIC_OBSERVATION,
                        defs)
    grouped = {s.name: s.group_schema for s in specs if s.group_schema is not None}
    group = _pick(grouped, "group", None, defs) if grouped else None
    title = f"maag protocol: one message, games {', '.join(names)}"
    return message_schema(action, observation, group, title=title, more_defs=defs)


def shipped_text() -> str:
    """The text of protocol/protocol.schema.json: the schema of every game, indented."""
    return json.dumps(game_schema(), indent=1, ensure_ascii=False) + "\n"
