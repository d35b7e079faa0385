"""Conquest's conformance replayer (conformance.py) on records of the public traces
(../shared/conformance/conquest-public.jsonl, or $MAAG_SHARED/conformance/...; that every
step of them matches is tests/engine/test_conformance.py's): corrupted records reported, a
wrong die, a state that differs, an illegal attempt marked legal."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from maag.engine.conformance import read_records, run


@pytest.fixture(scope="module")
def records(public_trace: Callable[[str], Path]) -> list[dict[str, Any]]:
    return read_records(public_trace("conquest"))


def _replay(records: list[dict[str, Any]], tmp_path: Path) -> str:
    path = tmp_path / "conquest-corrupt.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = io.StringIO()
    run(str(path), out=out, max_report=50)
    return out.getvalue()


def test_corrupted_records_are_reported(records: list[dict[str, Any]], tmp_path: Path) -> None:
    game0 = [json.loads(json.dumps(r)) for r in records if r["game"] == 0]
    n = len(game0)
    battle = next(i for i, r in enumerate(game0) if r.get("dice"))
    game0[battle]["dice"][0] = 7 - game0[battle]["dice"][0]  # one die changed
    illegal = next(i for i, r in enumerate(game0) if not r["legal"])
    game0[illegal]["legal"] = True  # an illegal attempt recorded as accepted
    game0[illegal]["next"] = game0[illegal - 1].get("next")
    moved = next(i for i, r in enumerate(game0)
                 if r["legal"] and r["action"]["type"] == "MOVE" and i > battle)
    game0[moved]["next"]["moved"] = []  # a state that differs
    text = _replay(game0, tmp_path)
    # Four: the record after the changed state starts from it, as the README says, and its
    # own `next` then disagrees with what the engine makes of it.
    assert text.splitlines()[-1] == f"conformance: {n - 4}/{n} steps match", text
    assert f"step {game0[illegal]['step']}" in text and "refuses a legal action" in text
    assert f"step {game0[moved]['step']}" in text and "moved: recorded []" in text
    assert f"step {game0[battle]['step']}" in text
