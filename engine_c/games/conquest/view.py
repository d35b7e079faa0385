"""Conquest in a terminal: a position and each action in words, for `maag replay ID --show`
(who owns what, the armies by type; a move with its path, a blitz, a join)."""

from __future__ import annotations

from typing import Any

__all__ = ["render", "describe"]


def _type_of(state: dict[str, Any]) -> dict[int, tuple[str, str]]:
    """unit id -> (owner, type) from the roster."""
    return {u: (player, kind) for player, kinds in state["roster"].items() for kind, ids in kinds.items()
            for u in ids}


def render(state: dict[str, Any]) -> str:
    """A state's (or observation's) JSON as text: the round and phase, then one line per
    territory with its owner and its units by type."""
    types = _type_of(state)
    kinds = list(next(iter(state["roster"].values())).keys())
    owner = {t: p for p, ts in state["owner"].items() for t in ts}
    result = state.get("result")
    if result:
        head = f"round {state['round']}: over, " + (
            f"{result['winner']} wins by {result['by']}" if result.get("winner") else
            f"a draw ({result['by'].replace('_', ' ')})")
    else:
        head = f"round {state['round']} of {state['rounds']}: {state['player']}, {state['phase']} move"
    lines = [head]
    for t in owner:
        units = state["units"].get(t, [])
        parts = []
        for player in state["roster"]:
            mine = [u for u in units if types[u][0] == player]
            if mine:
                counts = [f"{sum(1 for u in mine if types[u][1] == k)} {k}" for k in kinds
                          if any(types[u][1] == k for u in mine)]
                parts.append(f"{player}: " + ", ".join(counts))
        taken = " (taken this turn)" if t in state.get("conquered", []) else ""
        lines.append(f"  {t:<5} {owner[t]:<6} " + ("; ".join(parts) or "-") + taken)
    return "\n".join(lines)


def describe(state: dict[str, Any], action: dict[str, Any]) -> str:
    """An action in words, read against the JSON of the state it was played in (the order of
    GameSpec.describe: state, then action, as `maag replay --show` and the web view call it)."""
    who = state["player"]
    if action.get("type") == "end_phase":
        after = " (battles follow)" if state["phase"] == "combat" else ""
        return f"{who} ends the {state['phase']} move{after}"
    u = action["unit"]
    kind = _type_of(state).get(u, (who, "unit"))[1]
    path = action["path"]
    owner = {t: p for p, ts in state["owner"].items() for t in ts}
    text = f"{who} moves {kind} {u} " + " -> ".join(path)
    if len(path) == 3 and owner.get(path[1]) != who:
        text += f" (blitz through {path[1]})"
    if action.get("join"):
        text += " (joining the move before)"
    return text
