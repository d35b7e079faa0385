"""Hand-built conquest positions for the rules tests, on the default map (spec §2.2): the
start with the units placed as a test says, and a way to fight with chosen dice."""

from __future__ import annotations

from typing import Any

from maag.engine import Game, State
from maag.engine._lowlevel import ffi, lib

GAME = Game("conquest", {})
START = GAME.new_state(seed=1).to_json()
RED_INF = START["roster"]["Red"]["infantry"]
RED_ART = START["roster"]["Red"]["artillery"]
RED_TANK = START["roster"]["Red"]["tank"]
BLUE_INF = START["roster"]["Blue"]["infantry"]
BLUE_ART = START["roster"]["Blue"]["artillery"]
BLUE_TANK = START["roster"]["Blue"]["tank"]


def position(units: dict[str, list[int]], *, red: list[str] | None = None, player: str = "Red",
             phase: str = "combat", moved: list[int] | None = None, game: Game = GAME,
             **more: Any) -> State:
    """The default map with only `units` alive (territory -> ids); Red owns `red` (default
    R1..R7) and Blue the rest."""
    terr = [f"R{i}" for i in range(1, 8)] + [f"B{i}" for i in range(1, 8)]
    red = [f"R{i}" for i in range(1, 8)] if red is None else red
    js = {"round": 1, "player": player, "phase": phase,
          "owner": {"Red": [t for t in terr if t in red], "Blue": [t for t in terr if t not in red]},
          "units": units, "moved": moved or [], "result": None, **more}
    return game.state_from_json(js)


def move(unit: int, *path: str, join: bool = False) -> dict[str, Any]:
    return {"type": "move", "unit": unit, "path": list(path), **({"join": True} if join else {})}


END = {"type": "end_phase"}


def end_phase_with(st: State, dice: list[int]) -> int:
    """END_PHASE with the battles' dice taken from `dice`; returns how many were used
    (AssertionError if the engine refuses or the dice run out)."""
    seq = ffi.new("uint8_t[]", dice or [0])
    d = ffi.new("cq_dice *", {"rng": ffi.NULL, "seq": seq, "n": len(dice), "used": 0})
    rc = lib.cq_apply_dice(ffi.cast("cq_state *", st._buf), 0, d)
    assert rc == 0, ffi.string(st.game.vt.errstr(rc)).decode()
    return int(d.used)
