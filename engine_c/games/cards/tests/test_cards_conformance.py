"""The public card-game traces (../shared/conformance/cards-public.jsonl, or
$MAAG_SHARED/conformance/...) replayed through `maag conformance`'s checker, and a corrupted
step reported: a wrong health, a wrong legal-action count, an outcome of a random step that
the engine cannot produce."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from maag.engine import registry
from maag.server.kit.conformance import run

PUBLIC_STEPS = 2096


@pytest.fixture(scope="module")
def public_path(shared: Path) -> Path:
    path = shared / "conformance" / "cards-public.jsonl"
    if not path.is_file():
        pytest.fail(f"{path} is missing: the conformance traces are required (set MAAG_SHARED)")
    return path


@pytest.fixture(scope="module")
def records(public_path: Path) -> list[dict[str, Any]]:
    with open(public_path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_public_traces_match(public_path: Path) -> None:
    out = io.StringIO()
    status = run(str(public_path), out=out)
    assert out.getvalue().splitlines()[-1] == f"conformance: {PUBLIC_STEPS}/{PUBLIC_STEPS} steps match"
    assert status == 0


def test_a_corrupted_step_is_reported(records: list[dict[str, Any]]) -> None:
    check = registry.get("cards").conformance
    assert check is not None
    attack = next(r for r in records if r["action"]["type"] == "ATTACK" and not r["next"]["over"])
    bad = json.loads(json.dumps(attack))
    bad["next"]["players"][bad["state"]["active"] ^ 1]["hero"]["hp"] += 1
    assert any("hero.hp" in line for line in check(bad))
    bad = json.loads(json.dumps(attack))
    bad["n_legal"] += 1
    assert any("n_legal" in line for line in check(bad))


def test_an_unreachable_random_outcome_is_reported(records: list[dict[str, Any]]) -> None:
    check = registry.get("cards").conformance
    assert check is not None
    missiles = next(r for r in records if r["action"].get("card") == "M01" and r["random"]
                    and not r["next"]["over"])
    assert check(missiles) == []
    bad = json.loads(json.dumps(missiles))
    enemy = bad["next"]["players"][bad["state"]["active"] ^ 1]
    enemy["hero"]["hp"] -= 10  # more damage than three missiles can deal
    assert check(bad)


def test_random_steps_are_about_a_third_of_the_trace(records: list[dict[str, Any]]) -> None:
    # the replayer must exercise chance: draws on END_TURN and the random picks
    assert sum(r["random"] for r in records) > 500
    assert {r["action"].get("card") for r in records if r["random"]} >= {"M01", "P10", "N13"}
