"""Conquest's fixed action table and its limit, for code that needs a fixed-size action
space (maag.rl): `action_codes(game)` lists every action code a game on the configured map
can ever offer, in a fixed order (a superset of every legal list: the rules decide which
are legal); `limit_reached(state_json)` says whether a finished game was ended by the
round limit rather than won."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codec import game_map, intern

if TYPE_CHECKING:
    from ...game import Game


def action_codes(game: Game) -> list[int]:
    """END_PHASE; then for every unit of the map, every path of one step (two neighbours)
    or two steps (a middle neighbouring both ends), as a MOVE and as a JOIN."""
    m = game_map(game.config)
    num = [intern(name) for name in m.territories]
    paths: list[tuple[int, int, int]] = []
    for src in range(len(m.territories)):
        for mid in m.neighbours(src):
            paths.append((num[src], 0, num[mid]))
            paths += [(num[src], num[mid], num[dst]) for dst in m.neighbours(mid) if dst != src]
    codes = [0]
    for unit in range(len(m.units)):
        for src, mid, dst in paths:
            path = unit << 1 | src << 8 | mid << 16 | dst << 24
            codes += [path | 1, path]
    return codes


def limit_reached(state: dict[str, Any]) -> bool:
    """The game ended at the round limit (a draw)."""
    result = state.get("result")
    return isinstance(result, dict) and result.get("by") == "round_limit"


def max_game_length(game: Game) -> int:
    """At most this many actions in a game (OpenSpiel's MaxGameLength): a round is two turns
    of two phases, and a phase moves each unit of the map at most once and ends."""
    return int(game.config["rounds"]) * 2 * 2 * (len(game_map(game.config).units) + 1)


# Fields of the C state that are no features of a position (maag.rl.encoding): name numbers
# (a process-wide table: another process may number another map's names otherwise).
NOT_FEATURES = ("tname", "pname", "types.name")
