"""The JSON Schema of conquest's actions, observations and groups (docs/protocol.md §6).
Territory, player and unit-type names come from the map, so they are strings here."""

from __future__ import annotations

from ...jsonshape import array, boolean, enum, map_of, nat, nullable, obj, one_of, seat, string

UNIT = nat(127, description="a unit id")
PATH = array(string(), 2, 3, description="territories: where the unit stands, (a middle,) the end")

ACTION = one_of(
    obj({"type": enum("move"), "unit": UNIT, "path": PATH, "join": boolean()}, optional=("join",),
        description="one unit along a path; join: follow the last move into the empty territory it took"),
    obj({"type": enum("end_phase")}, description="end the phase (always legal)"),
)

OBSERVATION = obj({
    "round": nat(), "player": string("who moves"), "phase": enum("combat", "noncombat", "over"),
    "owner": map_of(array(string()), description="player -> its territories"),
    "units": map_of(array(UNIT), description="territory -> the living units in it"),
    "moved": array(UNIT, description="the mover's units that moved this turn"),
    "result": nullable(obj({"winner": nullable(string()),
                            "by": enum("capital", "annihilation", "round_limit")})),
    "conquered": array(string(), description="the territories the mover took this turn"),
    "join": nullable(obj({"path": PATH, "blitz": boolean()})),
    "rounds": nat(), "victory": enum("capital", "capital+annihilation"),
    "roster": map_of(map_of(array(UNIT)), description="player -> unit type -> ids"),
    "observer": seat(),
}, description="conquest: the whole state with its observer (nothing is hidden)")

GROUP = obj({
    "territory": string(), "phase": enum("combat", "noncombat"),
    "options": array(obj({"units": array(UNIT, 1), "actions": array({"$ref": "#/$defs/action"}, 1)}), 1),
}, description="one decision of the thesis's abstraction (spec §8): the units that move into a territory")

__all__ = ["ACTION", "OBSERVATION", "GROUP"]
