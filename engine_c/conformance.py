"""Conformance replaying: recorded reference traces (../shared/conformance/NAME-*.jsonl)
replayed step by step through the replayer of the trace's game (its registry entry's
`conformance`, the game's conformance.py): each record is one step, and every difference
between the recorded and the engine's result is reported. `maag conformance FILE.jsonl`
runs it; the engine's tests run it on every trace file of every game
(tests/engine/test_conformance.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from maag.engine import registry


def game_of(path: str) -> str:
    """The game a trace file belongs to, by its name (`heroes-public.jsonl` is heroes')."""
    prefix = Path(path).name.split("-", 1)[0].split(".", 1)[0]
    if prefix not in registry.names():
        raise ValueError(f"{path}: cannot tell the game from the file name; pass --game "
                         f"({', '.join(registry.names())})")
    return prefix


def trace_files(folder: str | Path, game: str) -> list[Path]:
    """The trace files of `game` in a conformance folder: NAME-*.jsonl, by name."""
    return sorted(Path(folder).glob(f"{game}-*.jsonl"))


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a trace file."""
    with open(path, encoding="utf-8") as f:
        return list(iter_records(f))


def iter_records(stream: TextIO) -> Iterator[dict[str, Any]]:
    """The records of a trace stream, one JSON object a line (blank lines skipped)."""
    for n, line in enumerate(stream, 1):
        line = line.strip()
        if line:
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"line {n}: not JSON ({e})") from e


def run(path: str, game: str | None = None, max_report: int = 5, out: TextIO = sys.stdout) -> int:
    """Check every record of a trace file; print mismatches and the summary line.
    Returns the exit status: 0 only if every step matches."""
    name = game or game_of(path)
    replay = registry.get(name).conformance
    if replay is None:
        raise ValueError(f"{name} has no conformance replayer")
    total = ok = reported = 0
    with open(path, encoding="utf-8") as f:
        for rec in iter_records(f):
            total += 1
            problems = replay(rec)
            if not problems:
                ok += 1
            elif reported < max_report:
                reported += 1
                print(f"game {rec.get('game', -1)} step {rec.get('step', -1)}: {rec.get('action')}", file=out)
                print("\n".join(problems[:20]), file=out)
    print(f"conformance: {ok}/{total} steps match", file=out)
    return 0 if ok == total and total > 0 else 1
