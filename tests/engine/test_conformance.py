"""Every trace file of every game replayed through its game's conformance replayer
(maag.engine.conformance, what `maag conformance` runs): one test shape for every game,
parametrised over the registry and the trace files in ../shared/conformance (or
$MAAG_SHARED/conformance). Each game's own tests check what its replayer reports of a
corrupted record (engine_c/games/<name>/tests/test_<name>_conformance.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from maag.engine import registry
from maag.engine.conformance import read_records, run, trace_files

# The step counts of the public traces: a trace that shrank would still "all match".
PUBLIC_STEPS = {"heroes-public.jsonl": 10817, "cards-public.jsonl": 2096, "conquest-public.jsonl": 2184}


def test_every_step_of_every_trace_matches(trace: tuple[str, Path]) -> None:
    game, path = trace
    n = len(read_records(path))
    out = io.StringIO()
    status = run(str(path), game=game, out=out)
    assert out.getvalue().splitlines()[-1] == f"conformance: {n}/{n} steps match", out.getvalue()
    assert status == 0
    assert n == PUBLIC_STEPS.get(path.name, n) and n > 0


def test_every_game_with_a_replayer_has_its_public_traces(shared: Path,
                                                          public_trace: Callable[[str], Path]) -> None:
    with_replayer = [name for name in registry.names() if registry.get(name).conformance is not None]
    assert {"heroes", "cards", "conquest"} <= set(with_replayer)
    for name in with_replayer:
        assert public_trace(name) in trace_files(shared / "conformance", name)


def test_the_game_of_a_trace_comes_from_its_name_or_is_given(public_trace: Callable[[str], Path],
                                                              tmp_path: Path) -> None:
    with open(public_trace("heroes"), encoding="utf-8") as f:
        head = [json.loads(next(f)) for _ in range(2)]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in head), encoding="utf-8")
    with pytest.raises(ValueError, match="cannot tell the game"):
        run(str(path), out=io.StringIO())
    out = io.StringIO()
    assert run(str(path), game="heroes", out=out) == 0, out.getvalue()
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        run(str(path), game="chess", out=io.StringIO())
