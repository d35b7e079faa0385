"""The evaluation hook (mg_search_params.eval_net) leaves the default path as it was: every
evaluating kernel gives the plans (and values) recorded before the hook existed, at fixed
seeds and iteration budgets (tests/evalnet/golden_plans.json, made by golden_plans.py)."""

from __future__ import annotations

import json
from pathlib import Path

from .golden_plans import plans


def test_default_evaluation_plans_are_unchanged() -> None:
    want = json.loads((Path(__file__).parent / "golden_plans.json").read_text())
    got = plans()
    assert len(got) == len(want) == 72
    for g, w in zip(got, want, strict=True):
        assert (g["game"], g["kernel"], g["params"], g["position"]) == (w["game"], w["kernel"], w["params"],
                                                                       w["position"])
        assert g["plan"] == w["plan"], g
        assert g["value"] == w["value"], g
