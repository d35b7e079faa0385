"""A hosted bot killed from outside its game is not charged (docs/competitions.md, "Governing a
competition"): a real `maag match` of the hostile `sleeper` package (it sleeps through its
turn) against `random`, on nim at a long time control; while the sleeper thinks, the test
kills its process inside the sandbox with SIGKILL, as an administrator's `kill -9` or the
machine's OOM killer would. The game is stored aborted (no winner, no verdict, so no strike
and no rating), its replay saying it was killed from outside. Before, the game was lost by
the sleeper with the verdict `crash`."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from maag.server.sandbox import cgroups
from maag.server.sandbox.jail import SANDBOX_UID_BASE, SANDBOX_UIDS

from tests.sandbox.conftest import MAAG, _group_owner, _proc_status, launch


def _bot_processes(maag_pid: int) -> list[int]:
    """The sleeper's own Python processes in maag's bot groups (not bwrap)."""
    uids = range(SANDBOX_UID_BASE, SANDBOX_UID_BASE + SANDBOX_UIDS)
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            owner = _group_owner(Path(f"/proc/{d}/cgroup").read_text())
            uid = int(_proc_status(d).get("Uid", "0").split()[0])
            cmd = Path(f"/proc/{d}/cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if owner == maag_pid and uid in uids and b"bot.py" in cmd:
            out.append(int(d))
    return out


def test_kill_9_from_outside_aborts_the_game_instead_of_a_crash(sandbox: cgroups.Cgroups,
                                                                tmp_path: Path) -> None:
    run = launch(tmp_path, "sleeper", games=1, tc="20s")
    killed: list[int] = []

    def watch() -> None:
        if killed:
            return
        sleeping = any("PROBE " in p.read_text(errors="replace")
                       for p in sorted((tmp_path / "tmp").glob("maag-match-*/sleeper*.log")))
        if not sleeping:
            return
        time.sleep(0.2)
        for pid in _bot_processes(run.proc.pid):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    m = run.finish(watch, timeout=150)
    assert killed, f"the sleeper's process was never found to kill:\n{m.describe()}"
    stored = m.stored()
    first, replay = stored[0]
    assert first.status == "aborted", (first, m.describe())
    assert first.winner is None and first.verdict is None, first
    assert replay is not None and "killed from outside" in replay["tags"].get("Abort", ""), replay["tags"]
    assert "crash" not in m.stdout, m.describe()
    shown = subprocess.run([*MAAG, "game", "show", str(first.id), "--db", str(m.db)], capture_output=True,
                           text=True, timeout=60)
    assert "aborted: killed from outside" in shown.stdout, shown.stdout + shown.stderr
