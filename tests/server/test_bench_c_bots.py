"""`maag bench server --c-bots`: the C bench bot (server/bench/c/bench_bot.c) builds without
warnings, plays real games through real referees (one, and two on one port) and against the
bare exchange, and does so under AddressSanitizer and UBSan. The figures themselves are not
checked: the machine running the tests is not quiet."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from maag.server.bench import processes
from maag.server.bench import server as bench

SRC = Path(processes.__file__).with_name("c") / "bench_bot.c"
CC = shutil.which("cc") or shutil.which("gcc")

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


@pytest.mark.parametrize("servers", [1, 2])
def test_c_bots_play_through_the_referee(servers: int) -> None:
    r = bench.run_level(4, 0.3, 1.5, "act", servers=servers, c_bots=True)
    assert r["errors"] == 0
    assert r["actions_per_s"] > 0 and r["messages_per_s"] > 0
    # One act per your_turn answered, each accepted (they pick from the legal list).
    assert r["actions_per_s"] == pytest.approx(r["messages_per_s"], rel=0.05)
    assert 0 <= r["rtt_p50_ms"] <= r["rtt_p99_ms"]
    assert r["bots_cpu_load"] >= 0 and r["cpu_load"] > 0


def test_c_bots_against_the_bare_exchange() -> None:
    r = bench.run_level(2, 0.3, 1.0, "act", bare=True, c_bots=True)
    assert r["errors"] == 0 and r["messages_per_s"] > 0


def test_c_bots_are_act_mode_only() -> None:
    with pytest.raises(ValueError, match="act mode only"):
        processes.start_clients(Path("/nonexistent"), 1, [], 1, 0, 0, "turn", c_bots=True)
    r = subprocess.run([sys.executable, "-m", "maag.server", "bench", "server", "--c-bots", "--mode", "turn"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "act mode only" in r.stderr


def test_sanitized_c_bot_plays_a_referee(tmp_path: Path) -> None:
    assert CC is not None
    exe = tmp_path / "bench_bot"
    subprocess.run([CC, "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", "-o", str(exe), str(SRC)], check=True)
    with tempfile.TemporaryDirectory(prefix="maag-bench-") as d:
        tmp = Path(d)
        db, tokens = processes.bench_db(tmp, 4, "s")
        ref, port = processes.start_referee(tmp, db, "referee")
        try:
            (tmp / "tokens").write_text("".join(t + "\n" for t in tokens))
            done = subprocess.run([str(exe), str(port), str(tmp / "tokens"), "0.2", "1.0"],
                                  capture_output=True, text=True, timeout=120)
        finally:
            ref.terminate()
            ref.wait(60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["measuring", "stopped"]
    out = json.loads(lines[2])
    assert out["errors"] == 0 and out["actions"] > 0 and out["messages"] > 0
    assert len(out["rtt"]) > 0 and min(out["rtt"]) >= 0


def test_bad_tokens_file_and_unreachable_referee_fail_clearly(tmp_path: Path) -> None:
    exe = processes.c_bench_bot()
    r = subprocess.run([str(exe), "1", str(tmp_path / "missing"), "0", "1"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and "missing" in r.stderr
    (tmp_path / "tokens").write_text("t\n")
    r = subprocess.run([str(exe), "1", str(tmp_path / "tokens"), "0", "1"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and "connect" in r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "usage" in r.stderr
