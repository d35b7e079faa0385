"""Typed settings, checked on the way in (python-chess's engine `Option`): a bot's settings,
and the parameters of maag's bundled agents (maag.bots uses this class too)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import BotError

# Settings the client itself manages: a bot may not declare or receive them as options.
MANAGED_OPTIONS = frozenset({"token", "connect", "name", "games", "concurrency", "want_legal",
                             "encoding", "seat", "game_id"})

_TYPES = ("bool", "int", "float", "str", "choice")


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One setting of a bot.

    name: the key (`--param name=value` on the command line).
    type: "bool", "int", "float", "str" or "choice".
    default: the value when the setting is not given.
    min, max: bounds for "int" and "float" (inclusive; None: unbounded).
    choices: the allowed values of a "choice".
    help: one line for `--help` listings.
    """

    name: str
    type: str
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""

    def __post_init__(self) -> None:
        if self.name in MANAGED_OPTIONS:
            raise BotError(f"option {self.name!r} is managed by the client and cannot be a bot option")
        if self.type not in _TYPES:
            raise BotError(f"option {self.name!r}: type must be one of {', '.join(_TYPES)}")
        if self.type == "choice" and not self.choices:
            raise BotError(f"option {self.name!r}: a choice needs choices")
        if self.default is not None:
            self.parse(self.default)

    def parse(self, value: Any, what: str = "option") -> Any:
        """`value` (a string from the command line, or already typed) as this option's type;
        BotError saying what is allowed if it does not fit (`what` names the setting's kind
        in the message: "option", or "parameter" for an agent's)."""
        try:
            v = self._convert(value)
        except (TypeError, ValueError):
            raise BotError(f"{what} {self.name!r} must be {self.describe()}, not {value!r}") from None
        if self.type in ("int", "float"):
            if (self.min is not None and v < self.min) or (self.max is not None and v > self.max):
                raise BotError(f"{what} {self.name!r} must be {self.describe()}, not {value!r}")
        if self.type == "choice" and v not in self.choices:
            raise BotError(f"{what} {self.name!r} must be one of {', '.join(self.choices)}, not {value!r}")
        return v

    def _convert(self, value: Any) -> Any:
        if self.type == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if self.type == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value)
        if self.type == "float":
            if isinstance(value, bool):
                raise ValueError(value)
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(value)
            return v
        return str(value)

    def describe(self) -> str:
        if self.type == "choice":
            return "one of " + ", ".join(self.choices)
        if self.type == "bool":
            return "true or false"
        lo = "" if self.min is None else f" >= {self.min:g}"
        hi = "" if self.max is None else f" <= {self.max:g}"
        kind = {"int": "an integer", "float": "a number", "str": "a string"}[self.type]
        return kind + (lo + ("," if lo and hi else "") + hi)


def parse_settings(options: Sequence[Option], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every option's value: the parsed given one, else its default. BotError for a managed,
    unknown or invalid setting (naming the known options)."""
    by_name = {o.name: o for o in options}
    out = {o.name: o.default for o in options}
    for key, value in (given or {}).items():
        if key in MANAGED_OPTIONS:
            raise BotError(f"{key!r} is managed by the client; it is not a bot setting")
        if key not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            raise BotError(f"unknown bot setting {key!r} (known: {known})")
        out[key] = by_name[key].parse(value)
    return out


def parse_params(pairs: Sequence[str]) -> dict[str, str]:
    """`["k=v", ...]` (from `--param k=v`) as a dict; BotError for an item without `=`."""
    out: dict[str, str] = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise BotError(f"a setting must look like key=value, not {p!r}")
        out[key.strip()] = value
    return out
