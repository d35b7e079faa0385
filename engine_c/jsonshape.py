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


def obj(props: dict[str, Any], *, optional: Iterable[str] = (), description: str = "",
        closed: bool = True) -> dict[str, Any]:
    """A map with these keys, all required but `optional`; no other key when `closed`."""
    opt = set(optional)
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "required": [k for k in props if k not in opt]}
    if closed:
        out["additionalProperties"] = False
    if description:
        out["description"] = description
    return out


def integer(lo: int | None = None, hi: int | None = None, description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer"}
    if lo is not None:
        out["minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    if description:
        out["description"] = description
    return out


def nat(hi: int | None = None, description: str = "") -> dict[str, Any]:
    """A non-negative integer (at most hi)."""
    return integer(0, hi, description)


def enum(*values: Any, description: str = "") -> dict[str, Any]:
    return {"enum": list(values), **({"description": description} if description else {})}


def seat(description: str = "") -> dict[str, Any]:
    """1 or 2."""
    return enum(1, 2, description=description)


def string(description: str = "") -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {})}


def boolean(description: str = "") -> dict[str, Any]:
    return {"type": "boolean", **({"description": description} if description else {})}


def array(items: dict[str, Any], lo: int | None = None, hi: int | None = None,
          description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": items}
    if lo is not None:
        out["minItems"] = lo
    if hi is not None:
        out["maxItems"] = hi
    if description:
        out["description"] = description
    return out


def map_of(values: dict[str, Any], keys: dict[str, Any] | None = None,
           description: str = "") -> dict[str, Any]:
    """A map whose values all have one shape (and whose keys, if given, match `keys`)."""
    out: dict[str, Any] = {"type": "object", "additionalProperties": values}
    if keys is not None:
        out["propertyNames"] = keys
    if description:
        out["description"] = description
    return out


def nullable(s: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [s, {"type": "null"}]}


def one_of(*shapes: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"oneOf": list(shapes), **({"description": description} if description else {})}
