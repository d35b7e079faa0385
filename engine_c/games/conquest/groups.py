"""The thesis's action abstraction (spec/conquest.md §8) as the game's grouped legal actions.

A turn of conquest moves a whole army one unit at a time, so the flat list of legal actions
says little about what a phase can do: on the default map a player has about 10^5 ways to
spend one combat move. The thesis cut that down by deciding per TERRITORY: which set of
units moves into it. A group here is one such decision: a territory and its options, each
a set of units with the legal actions that carry it out (a MOVE, then JOINs for the units
that follow it). Combat groups are the enemy territories next to the mover's own, with the
unit sets the §8.1 strength test lets through (largest first; the cheapest unit for an
empty territory); non-combat groups are the mover's territories with none, half or all of
each neighbouring source's free units (§8.2). Not choosing a group is SKIP; `end_phase`
ends the phase.

Groups are read from the state alone (conquest_decisions.c, `cq_groups`): a territory
already chosen may be offered again with the units still free, and the territories taken
during this combat move open no new targets, as in the thesis.

    >>> from maag.engine import Game
    >>> s = Game("conquest").new_state(seed=1)
    >>> g = groups(s)[0]
    >>> g.territory, g.phase, len(g.options[0].actions) == len(g.options[0].units)
    ('B1', 'combat', True)

The referee sends them in `your_turn.groups` to a bot whose hello sets `want_groups`
(docs/protocol.md §6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..._lowlevel import ffi, lib
from ...game import Action, State
from .codec import name_of

__all__ = ["Group", "Option", "groups", "groups_json"]


@dataclass(frozen=True, slots=True)
class Option:
    """One way to decide a group: these units move into the territory, by these actions
    (legal in this order from the state the groups were read from). The units are those the
    actions move: of §8's set, the rules may refuse some (a second path into a territory
    taken this phase), and an option they refuse whole is not offered."""

    units: tuple[int, ...]
    actions: tuple[Action, ...]


@dataclass(frozen=True, slots=True)
class Group:
    """One decision of §8: the units to move into `territory` in this `phase`."""

    territory: str
    phase: str
    """"combat" (a target to attack, or an empty one to walk into) or "noncombat"."""
    options: tuple[Option, ...]


def groups(state: State) -> list[Group]:
    """The groups of the player to move at `state` (a conquest state or observation), in §8's
    order; [] once the game is over. ValueError for another game."""
    if state.game.name != "conquest":
        raise ValueError(f"groups of the thesis's abstraction exist for conquest, not {state.game.name}")
    st = ffi.cast("cq_state *", state._buf)
    terr_of = ffi.new("uint8_t[]", lib.CQ_MAX_GROUP_OPTIONS)
    units = ffi.new("uint64_t[]", 2 * lib.CQ_MAX_GROUP_OPTIONS)
    n = lib.cq_groups(st, terr_of, units)
    codes = ffi.new("mg_action[]", lib.CQ_MAX_UNITS)
    phase = "combat" if st.phase == 0 else "noncombat"  # CQ_COMBAT
    out: list[Group] = []
    opts: list[Option] = []
    for i in range(n):
        t = terr_of[i]
        k = lib.cq_group_actions(st, t, units + 2 * i, codes)
        if k:
            moves = [int(codes[j]) for j in range(k)]
            opts.append(Option(tuple(c >> 1 & 0x7F for c in moves),  # CQ_A_UNIT
                               tuple(Action(c, "conquest") for c in moves)))
        if (i + 1 == n or terr_of[i + 1] != t) and opts:
            out.append(Group(name_of(st.tname[t]), phase, tuple(opts)))
            opts = []
    return out


def groups_json(state: State) -> list[dict[str, Any]]:
    """The groups as the protocol sends them: `{"territory", "phase", "options": [{"units",
    "actions": [action maps]}]}`."""
    return [{"territory": g.territory, "phase": g.phase,
             "options": [{"units": list(o.units), "actions": [a.to_dict() for a in o.actions]}
                         for o in g.options]}
            for g in groups(state)]
