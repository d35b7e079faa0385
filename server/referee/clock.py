"""Time control as data: `TimeControl` (what a game allows), its cutechess-like text syntax,
`SeatClock` (one seat's running account) and `Seat` (the clock with the seat's other
counters). No timers and no I/O here: callers pass the time in, so the referee core and its
tests decide what "now" is.

Syntax accepted by `TimeControl.parse` (double-dash options of `maag serve` / `maag match`):

    inf                    no limit at all
    1s   500ms   0.5       a budget per turn (a bare number is seconds)
    500ms+100   1s+0.2     a budget per turn plus an increment added to the seat's overage
                           bank after each of its turns (a bare increment takes the unit of
                           the budget before it: 500ms+100 adds 100 ms)
    40/60+1                cutechess's turns/seconds+increment: no fixed budget per turn; a
                           bank of 60 s, another 60 s added every 40 turns, plus 1 s per turn
    ...,bank=5s,lag=50ms   key=value settings after a comma override any field:
                           turn, inc, bank, turns, lag (times with units, or bare seconds)

How a turn is charged: the seat may spend `turn_ms`, then draws on its bank; the turn is
late when its thinking time exceeds `turn_ms + bank`. Thinking time is the wall time from
the referee's prompt (`your_turn`, or the reply to its previous message) to the seat's next
message, less the transport time of that exchange (measured by the server, capped at
`lag_ms`). After the turn, overage is taken from the bank, then the increment is added.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any

__all__ = ["TimeControl", "SeatClock", "parse_duration_ms"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min)?\s*$")
_UNIT_MS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "min": 60_000.0, None: 1000.0}


def parse_duration_ms(text: str, default_unit: str | None = None) -> float:
    """Milliseconds from "500ms", "1.5s", "2m" or a bare number (seconds, or `default_unit`).
    Raises ValueError with the accepted forms."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r} (use e.g. 500ms, 1s, 1.5, 2m)")
    unit = m.group(2) or default_unit
    return float(m.group(1)) * _UNIT_MS[unit]


def _unit_of(text: str) -> str | None:
    m = _DURATION.match(text)
    return m.group(2) if m else None


@dataclass(frozen=True, slots=True)
class TimeControl:
    """What the clock allows each seat. All times in milliseconds."""

    turn_ms: float | None = 1000.0
    """Budget of one turn; None: unlimited (then no other field matters)."""
    increment_ms: float = 0.0
    """Added to the seat's bank after each of its turns."""
    bank_ms: float = 0.0
    """Overage bank at the start (and, with `turns`, added again every `turns` turns)."""
    turns: int | None = None
    """Refill period of the bank in turns (cutechess's moves/time); None: never refilled."""
    lag_ms: float = 50.0
    """Transport allowance: per exchange, up to this much measured transport time is not
    charged, and the referee waits this much past a deadline before ending the turn."""

    def __post_init__(self) -> None:
        for f in ("turn_ms", "increment_ms", "bank_ms", "lag_ms"):
            v = getattr(self, f)
            if v is not None and (not math.isfinite(v) or v < 0):
                raise ValueError(f"time control field {f} must be a finite number >= 0, not {v!r}")
        if self.turns is not None and self.turns < 1:
            raise ValueError("time control field turns must be >= 1")
        if self.turn_ms == 0 and self.bank_ms == 0 and self.increment_ms == 0:
            raise ValueError("a time control of zero time leaves no time to act")

    @property
    def unlimited(self) -> bool:
        return self.turn_ms is None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """A TimeControl from the syntax in this module's docstring; ValueError if malformed."""
        text = text.strip()
        if not text:
            raise ValueError("empty time control")
        head, *opts = [p.strip() for p in text.split(",")]
        values: dict[str, Any] = {}
        if "=" in head:
            opts.insert(0, head)
        elif head == "inf":
            return cls(turn_ms=None)
        else:
            values.update(cls._parse_head(head))
        keys = {"turn": "turn_ms", "inc": "increment_ms", "bank": "bank_ms", "lag": "lag_ms",
                "turns": "turns"}
        for opt in opts:
            k, sep, v = opt.partition("=")
            k = k.strip()
            if not sep or k not in keys:
                raise ValueError(f"bad time-control setting {opt!r}: use {', '.join(keys)}=VALUE")
            if k == "turns":
                values["turns"] = _parse_turns(v)
            elif k == "turn" and v.strip() == "inf":
                values["turn_ms"] = None
            else:
                values[keys[k]] = parse_duration_ms(v)
        return cls(**values)

    @staticmethod
    def _parse_head(head: str) -> dict[str, Any]:
        turns: int | None = None
        if "/" in head:
            n, head = head.split("/", 1)
            turns = _parse_turns(n)
        base, plus, inc = head.partition("+")
        base_ms = parse_duration_ms(base)
        inc_ms = parse_duration_ms(inc, _unit_of(base)) if plus else 0.0
        if turns is not None:
            return {"turn_ms": 0.0, "bank_ms": base_ms, "turns": turns, "increment_ms": inc_ms}
        return {"turn_ms": base_ms, "increment_ms": inc_ms}

    def __str__(self) -> str:
        if self.turn_ms is None:
            return "inf"
        if self.turns is not None and self.turn_ms == 0:
            s = f"{self.turns}/{_fmt(self.bank_ms)}"
            extra = {}
        else:
            s = _fmt(self.turn_ms)
            extra = {"bank": self.bank_ms} if self.bank_ms else {}
            if self.turns is not None:
                extra["turns"] = self.turns
        if self.increment_ms:
            s += "+" + _fmt(self.increment_ms)
        if self.lag_ms != 50.0:
            extra["lag"] = self.lag_ms
        for k, v in extra.items():
            s += f",{k}={v}" if k == "turns" else f",{k}={_fmt(v)}"
        return s

    def __repr__(self) -> str:
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if getattr(self, f.name) is not None]
        return f"TimeControl({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """Wire form: every field, milliseconds as numbers, None for unlimited."""
        return {"turn_ms": self.turn_ms, "increment_ms": self.increment_ms, "bank_ms": self.bank_ms,
                "turns": self.turns, "lag_ms": self.lag_ms, "text": str(self)}

    def to_wire(self) -> dict[str, int | None]:
        """The protocol's `game_start.time_control`: whole milliseconds (null: unlimited)."""
        if self.turn_ms is None:
            return {"turn_ms": None, "increment_ms": None, "bank_ms": None, "lag_ms": None, "turns": None}
        return {"turn_ms": round(self.turn_ms), "increment_ms": round(self.increment_ms),
                "bank_ms": round(self.bank_ms), "lag_ms": round(self.lag_ms), "turns": self.turns}

    def with_lag(self, lag_ms: float) -> TimeControl:
        return replace(self, lag_ms=lag_ms)


def _parse_turns(text: str) -> int:
    try:
        n = int(text.strip())
    except ValueError:
        raise ValueError(f"turns must be a whole number, not {text!r}") from None
    if n < 1:
        raise ValueError("turns must be >= 1")
    return n


def _fmt(ms: float) -> str:
    if ms >= 1000 and ms % 1000 == 0:
        return f"{int(ms // 1000)}s"
    if ms >= 1000:
        return f"{ms / 1000:g}s"
    return f"{ms:g}ms"


@dataclass(slots=True)
class SeatClock:
    """One seat's account under a TimeControl. Times in milliseconds."""

    tc: TimeControl
    bank_ms: float = 0.0
    """Overage bank left."""
    used_ms: float = 0.0
    """Thinking time charged in the current turn."""
    turns: int = 0
    """Turns this seat has completed."""
    think_total_ms: float = 0.0
    transport_total_ms: float = 0.0
    over_ms: list[float] = field(default_factory=list)
    """Per late turn: how far over the allowance it went."""

    def __post_init__(self) -> None:
        self.bank_ms = self.tc.bank_ms

    def available_ms(self) -> float:
        """Thinking time the current turn may still use (inf when unlimited)."""
        if self.tc.turn_ms is None:
            return math.inf
        return self.tc.turn_ms + self.bank_ms - self.used_ms

    def charge(self, wall_ms: float, transport_ms: float) -> float:
        """Charge one exchange of `wall_ms` of which up to `lag_ms` of measured transport is
        forgiven; returns the thinking time charged."""
        # (max and min written out: this runs every act)
        wall_ms = wall_ms if wall_ms > 0.0 else 0.0
        transport = transport_ms if transport_ms > 0.0 else 0.0
        lag = self.tc.lag_ms
        if lag < transport:
            transport = lag
        if wall_ms < transport:
            transport = wall_ms
        think = wall_ms - transport
        self.used_ms += think
        self.think_total_ms += think
        self.transport_total_ms += transport
        return think

    @property
    def late(self) -> bool:
        return self.available_ms() < 0

    def end_turn(self) -> None:
        """Close the turn: take overage from the bank, add the increment (and the periodic
        refill)."""
        if self.tc.turn_ms is not None:
            over = max(0.0, self.used_ms - self.tc.turn_ms)
            if over > self.bank_ms:
                self.over_ms.append(over - self.bank_ms)
            self.bank_ms = max(0.0, self.bank_ms - over) + self.tc.increment_ms
            self.turns += 1
            if self.tc.turns is not None and self.turns % self.tc.turns == 0:
                self.bank_ms += self.tc.bank_ms
        else:
            self.turns += 1
        self.used_ms = 0.0


@dataclass(slots=True)
class Seat:
    """One seat of a game as the referee keeps it: its clock, when it was prompted, its
    connection's absence and the counters its policies read."""

    name: str
    clock: SeatClock
    prompt_at: float | None = None      # when the referee last prompted this seat (s)
    disconnected_at: float | None = None
    illegal: int = 0
    late_turns: int = 0
    want_legal: bool = False
    want_groups: bool = False
    turn_events: bool = False  # hello.events "turn": the other seat's actions once its turn ends
    held: list[int] = field(default_factory=list)  # those actions' codes, until then
    turn_search: list[float] | None = None  # iterations, time_ms the seat reported this turn
    search: list[tuple[float, float]] = field(default_factory=list)  # per reported turn
