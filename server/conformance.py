"""`maag conformance FILE.jsonl`: replay recorded reference traces step by step.

For every record: load the recorded state, compare the engine's legal-action count with
`n_legal` as the traces' README defines it (the reference lists end_turn only at AP 0),
apply the recorded action and compare the whole resulting state with the recorded `next`,
exactly (random steps too: the engine implements the reference's seeded draw rule)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from maag.engine import EngineError, Game
from maag.engine._lowlevel import ffi, lib


@dataclass
class StepResult:
    game: int
    step: int
    problems: list[str] = field(default_factory=list)


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Path -> leaf value; board units are keyed by their square so diffs read well."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list) and obj and all(isinstance(u, dict) and "x" in u for u in obj):
        for u in obj:
            out.update(_flatten({k: v for k, v in u.items() if k not in ("x", "y")},
                                f"{prefix}[{u['x']},{u['y']}]"))
    else:
        out[prefix] = obj
    return out


def diff_states(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Readable differences, comparing only the keys the recorded state has."""
    exp = _flatten(expected)
    act = _flatten({k: v for k, v in actual.items() if k in expected})
    lines = []
    for path in sorted(set(exp) | set(act)):
        if exp.get(path, "<absent>") != act.get(path, "<absent>"):
            want, got = exp.get(path, "<absent>"), act.get(path, "<absent>")
            lines.append(f"  {path}: expected {want!r}, got {got!r}")
    return lines


_GAMES: dict[tuple[str, str], Game] = {}


def check_record(rec: dict[str, Any]) -> StepResult:
    res = StepResult(rec.get("game", -1), rec.get("step", -1))
    key = (rec["map"], rec["deck_size"])
    if key not in _GAMES:
        _GAMES[key] = Game("heroes", {"map": rec["map"], "deck": rec["deck_size"], "draws": "seeded"})
    game = _GAMES[key]
    try:
        st = game.state_from_json(rec["state"], rng_seed=0)
    except EngineError as e:
        res.problems.append(f"  recorded state rejected: {e}")
        return res
    n_legal = lib.hr_reference_legal_count(ffi.cast("hr_state *", st._buf))
    if n_legal != rec["n_legal"]:
        res.problems.append(f"  n_legal: expected {rec['n_legal']}, got {n_legal}")
    action = {k: v for k, v in rec["action"].items() if k != "engine_label"}
    try:
        st.apply(action)
    except (EngineError, ValueError) as e:
        res.problems.append(f"  action {json.dumps(rec['action'])} rejected: {e}")
        return res
    res.problems.extend(diff_states(rec["next"], st.to_json()))
    return res


def iter_records(stream: TextIO) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(stream, 1):
        line = line.strip()
        if line:
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"line {n}: not JSON ({e})") from e


def run(path: str, max_report: int = 5, out: TextIO = sys.stdout) -> int:
    """Check every record of a trace file; print mismatches and the summary line.
    Returns the exit status: 0 only if every step matches."""
    total = ok = reported = 0
    with open(path, encoding="utf-8") as f:
        for rec in iter_records(f):
            total += 1
            res = check_record(rec)
            if not res.problems:
                ok += 1
            elif reported < max_report:
                reported += 1
                print(f"game {res.game} step {res.step}: {rec['action']}", file=out)
                print("\n".join(res.problems[:20]), file=out)
    print(f"conformance: {ok}/{total} steps match", file=out)
    return 0 if ok == total and total > 0 else 1
