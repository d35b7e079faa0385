"""`maag bench server --spectators N` at a tiny size: the referee serves its web view, the
spectators are pushed the games, and both throughputs and their ratio are reported (the
numbers themselves are not checked: the machine running the tests is not quiet)."""

from __future__ import annotations

import json
import subprocess
import sys

from maag.server.bench.server import run_watched


def test_throughput_is_measured_without_and_with_spectators() -> None:
    r = run_watched((1,), spectators=3, runs=1, warmup=0.5, seconds=1.5)
    plain, watched = r["plain"]["1"], r["watched"]["1"]
    assert plain["actions_per_s"] > 0 and watched["actions_per_s"] > 0
    assert plain["spectators"] == 0 and plain["spectator_frames_per_s"] == 0
    assert watched["spectators"] == 3 and watched["spectator_frames_per_s"] > 0
    assert watched["errors"] == 0
    assert r["ratio"]["1"]["actions_per_s"] == round(watched["actions_per_s"] / plain["actions_per_s"], 3)


def test_the_command_line_reports_both() -> None:
    cmd = ["bench", "server", "--games", "1", "--mode", "act", "--seconds", "1", "--spectators", "2",
           "--json"]
    r = subprocess.run([sys.executable, "-m", "maag.server", *cmd], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["spectators"] == 2 and out["mode"] == "act"
    assert set(out) >= {"plain", "watched", "ratio", "machine"}
    assert out["watched"]["1"]["spectator_frames_per_s"] > 0
