"""How the referee treats a late, erring, vanishing or resigning seat (see session.py's
docstring for what each policy does). Plain data, so the command line can build one
without loading the engine."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = ["LatePolicy", "Policy"]


class LatePolicy(str, enum.Enum):
    END_TURN = "end_turn"
    FORFEIT = "forfeit"


@dataclass(frozen=True, slots=True)
class Policy:
    """How the referee treats a late, erring, vanishing or resigning seat."""

    late: LatePolicy = LatePolicy.END_TURN
    """What a late turn costs: its end (END_TURN) or the game (FORFEIT)."""
    max_late: int | None = 3
    """With END_TURN: the game is lost on time at this many late turns (None: never)."""
    max_illegal: int | None = 10
    """The game is lost at this many illegal or malformed actions (None: never)."""
    disconnect_grace_ms: float = 10_000.0
    """How long a disconnected seat may take to reconnect before it loses."""

    def to_dict(self) -> dict[str, Any]:
        return {"late": self.late.value, "max_late": self.max_late, "max_illegal": self.max_illegal,
                "disconnect_grace_ms": self.disconnect_grace_ms}
