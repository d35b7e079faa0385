"""The JSON Schema (2020-12) of the maag protocol's messages, generated from the messages'
own field rules (`Message.RULES` in _messages.py): the checks the server makes and the
schema a bot author validates against come from the same table.

    >>> from maag.protocol.schema import message_schema
    >>> s = message_schema()
    >>> s["$defs"]["hello"]["required"]
    ['type', 'v', 'name', 'token', 'games']

The shapes of actions and observations belong to the games: the generic schema says only
that an action is a map with a string `type` and an observation a map. Pass a game's
shapes (the registry's `GameSpec.action_schema`, `observation_schema`) to get them checked
too; `maag protocol schema` does that for every registered game.

What JSON Schema cannot say, and the server still checks: maps and lists nest at most
MAX_DEPTH (32) levels deep, integers inside payloads fit in 64 bits, and msgpack carries
no binary strings. A frame's framing (the greeting line, JSON lines or 4-byte msgpack
lengths) is docs/protocol.md §2's."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

from ._errors import ErrorCode
from ._messages import (
    CLIENT_MESSAGES,
    MAX_ID,
    MAX_INFO_TEXT,
    MAX_NAME,
    PROTOCOL_VERSION,
    SERVER_MESSAGES,
    SUPPORTED_VERSIONS,
    Message,
    Rule,
)

__all__ = ["DIALECT", "GENERIC_ACTION", "GENERIC_OBSERVATION", "message_schema", "field_schema"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

GENERIC_ACTION: dict[str, Any] = {
    "type": "object", "required": ["type"], "properties": {"type": {"type": "string"}},
    "description": "An action: a map with a string `type`; the other fields are the game's "
                   "(docs/protocol.md §6).",
}
GENERIC_OBSERVATION: dict[str, Any] = {
    "type": "object", "description": "What the seat may see: the game's map (docs/protocol.md §6).",
}
# Fields whose maps have a shape of their own in $defs.
_MAP_REFS = {("your_turn", "observation"): "#/$defs/observation"}
_TIME_CONTROL_KEYS = {
    "turn_ms": "budget per turn", "increment_ms": "added to the bank after each turn",
    "bank_ms": "overage bank at the start", "lag_ms": "transport allowance per turn",
    "turns": "turns per control period (null: the whole game)",
}


def field_schema(msg: type[Message], r: Rule) -> dict[str, Any]:
    """The schema of one field of `msg` under its rule (null allowed when the rule is
    optional)."""
    s = _kind_schema(msg, r)
    return {"anyOf": [s, {"type": "null"}]} if r.optional else s


def _kind_schema(msg: type[Message], r: Rule) -> dict[str, Any]:
    k = r.kind
    if k == "str":
        return {"type": "string", "minLength": r.lo, "maxLength": r.hi}
    if k == "choice":
        return {"enum": list(r.choices)}
    if k == "int":
        return {"type": "integer", "minimum": r.lo, "maximum": r.hi}
    if k == "bool":
        return {"type": "boolean"}
    if k == "seat":
        return {"enum": [1, 2]}
    if k == "map":
        ref = _MAP_REFS.get((msg.TYPE, r.field))
        return {"$ref": ref} if ref else {"type": "object"}
    if k == "ms_map":
        entry = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
        return {"type": "object", "additionalProperties": entry,
                "properties": {key: {**entry, "description": f"milliseconds: {what}"} if key != "turns"
                               else {**entry, "description": what}
                               for key, what in _TIME_CONTROL_KEYS.items()}}
    if k == "info":
        return {"type": "object", "maxProperties": r.hi,
                "propertyNames": {"minLength": 1, "maxLength": MAX_NAME},
                "additionalProperties": {"anyOf": [{"type": "number"},
                                                   {"type": "string", "maxLength": MAX_INFO_TEXT}]},
                "description": "what the bot's search did (e.g. iterations, nodes, time_ms, score); "
                               "recorded, never acted on"}
    if k == "action":
        return {"$ref": "#/$defs/action"}
    if k == "actions":
        return {"type": "array", "items": {"$ref": "#/$defs/action"}, "minItems": r.lo, "maxItems": r.hi}
    if k == "names":
        return {"type": "array", "minItems": r.lo, "maxItems": r.hi,
                "items": {"type": "string", "minLength": 1, "maxLength": MAX_NAME}}
    if k == "groups":
        return {"type": "array", "items": {"$ref": "#/$defs/group"}}
    if k == "code":
        return {"type": "string", "minLength": r.lo, "maxLength": r.hi,
                "description": "an error code; this version's: " + ", ".join(c.value for c in ErrorCode)
                               + " (more may be added)"}
    if k == "id":
        return {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": MAX_ID},
                          {"type": "integer", "minimum": -(2**53) + 1, "maximum": 2**53 - 1}]}
    raise ValueError(f"{msg.TYPE}.{r.field}: no schema for rule kind {k!r}")


def _message(msg: type[Message]) -> dict[str, Any]:
    rules = {r.field: r for r in msg.RULES}
    versions = [v for v in SUPPORTED_VERSIONS if v >= msg.SINCE]
    props: dict[str, Any] = {"type": {"const": msg.TYPE},
                             "v": {"const": versions[0]} if len(versions) == 1 else {"enum": versions}}
    required = ["type", "v"]
    for f in fields(msg):  # type: ignore[arg-type]
        if f.name not in rules:
            raise ValueError(f"{msg.TYPE}.{f.name} has no rule")
        props[f.name] = field_schema(msg, rules[f.name])
        if f.default is MISSING and f.default_factory is MISSING:
            required.append(f.name)
        elif f.default is not None:
            props[f.name] = {**props[f.name], "default": f.default}
    doc = " ".join((msg.__doc__ or "").split())
    out = {"title": msg.TYPE, "description": f"Sent by the {msg.SENDER}. {doc}", "type": "object",
           "properties": props, "required": required, "additionalProperties": False}
    # A field a later version brought is no field of an earlier version's message.
    later = [{"if": {"properties": {"v": {"const": v}}, "required": ["v"]},
              "then": {"not": {"anyOf": [{"required": [name]} for name, since in msg.FIELDS_SINCE.items()
                                         if since > v]}}}
             for v in SUPPORTED_VERSIONS if any(since > v for since in msg.FIELDS_SINCE.values())]
    if later:
        out["allOf"] = later
    return out


def message_schema(action: dict[str, Any] | None = None, observation: dict[str, Any] | None = None,
                   group: dict[str, Any] | None = None, *, title: str = "",
                   more_defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema of one message of either side (a frame's map). `action`, `observation` and
    `group` replace the generic shapes (a game's, or an anyOf of several games'); `more_defs`
    adds to $defs what they refer to."""
    defs: dict[str, Any] = {m.TYPE: _message(m) for m in CLIENT_MESSAGES + SERVER_MESSAGES}
    defs["action"] = action or GENERIC_ACTION
    defs["observation"] = observation or GENERIC_OBSERVATION
    defs["group"] = group or {
        "type": "object", "required": ["options"],
        "description": "One group of a game's grouped legal actions (your_turn.groups): options, "
                       "each the actions to send in that order; the other keys are the game's.",
        "properties": {"options": {"type": "array", "items": {
            "type": "object", "required": ["actions"],
            "properties": {"actions": {"type": "array", "items": {"$ref": "#/$defs/action"}}}}}}}
    defs.update(more_defs or {})
    defs["client_message"] = {"oneOf": [{"$ref": f"#/$defs/{m.TYPE}"} for m in CLIENT_MESSAGES]}
    defs["server_message"] = {"oneOf": [{"$ref": f"#/$defs/{m.TYPE}"} for m in SERVER_MESSAGES]}
    return {
        "$schema": DIALECT,
        "$id": f"https://maag.dev/protocol/v{PROTOCOL_VERSION}/message.schema.json",
        "title": title or f"maag protocol v{PROTOCOL_VERSION}: one message",
        "description": "A frame's map, from either side (client_message and server_message in $defs "
                       "say which side sends what), of any version a referee speaks (`v`: the "
                       f"connection's, {' or '.join(map(str, SUPPORTED_VERSIONS))}; a message type or "
                       "field a later version brought is refused on an earlier version's connection). "
                       "Generated from maag.protocol's message rules. "
                       "Beyond the schema, the server refuses maps and lists nested deeper than 32 "
                       "levels and payload integers outside 64 bits. Framing: docs/protocol.md §2.",
        "oneOf": [{"$ref": "#/$defs/client_message"}, {"$ref": "#/$defs/server_message"}],
        "$defs": defs,
    }
