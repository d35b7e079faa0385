"""Small builders of JSON Schema (2020-12) fragments, for the games' action and observation
shapes (each game's schema.py; `maag protocol schema` puts them into the protocol's schema).

    >>> obj({"x": nat(), "tag": enum("a", "b")}, optional=("tag",))["required"]
    ['x']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["obj", "nat", "integer", "enum", "array", "string", "boolean", "nullable", "seat", "map_of",
           "one_of"]


def _shape(base: dict[str, Any], description: str = "", **extra: Any) -> dict[str, Any]:
    """`base` with the `extra` keywords that are set (not None), then the description if any:
    every builder below is one of these."""
    out = dict(base)
    out.update({k: v for k, v in extra.items() if v is not None})
    if description:
        out["description"] = description
    return out


def obj(props: dict[str, Any], *, optional: Iterable[str] = (), description: str = "",
        closed: bool = True) -> dict[str, Any]:
    """A map with these keys, all required but `optional`; no other key when `closed`."""
    opt = set(optional)
    return _shape({"type": "object", "properties": props, "required": [k for k in props if k not in opt]},
                  description, additionalProperties=False if closed else None)


def integer(lo: int | None = None, hi: int | None = None, description: str = "") -> dict[str, Any]:
    return _shape({"type": "integer"}, description, minimum=lo, maximum=hi)


def nat(hi: int | None = None, description: str = "") -> dict[str, Any]:
    """A non-negative integer (at most hi)."""
    return integer(0, hi, description)


def enum(*values: Any, description: str = "") -> dict[str, Any]:
    return _shape({"enum": list(values)}, description)


def seat(description: str = "") -> dict[str, Any]:
    """1 or 2."""
    return enum(1, 2, description=description)


def string(description: str = "") -> dict[str, Any]:
    return _shape({"type": "string"}, description)


def boolean(description: str = "") -> dict[str, Any]:
    return _shape({"type": "boolean"}, description)


def array(items: dict[str, Any], lo: int | None = None, hi: int | None = None,
          description: str = "") -> dict[str, Any]:
    return _shape({"type": "array", "items": items}, description, minItems=lo, maxItems=hi)


def map_of(values: dict[str, Any], keys: dict[str, Any] | None = None,
           description: str = "") -> dict[str, Any]:
    """A map whose values all have one shape (and whose keys, if given, match `keys`)."""
    return _shape({"type": "object", "additionalProperties": values}, description, propertyNames=keys)


def nullable(s: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [s, {"type": "null"}]}


def one_of(*shapes: dict[str, Any], description: str = "") -> dict[str, Any]:
    return _shape({"oneOf": list(shapes)}, description)
