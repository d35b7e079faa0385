"""Hostile bot: reads every process it can find under /proc: its command line, owner and
environment, its open files and root folder. Prints what it saw as a `PROBE {...}` line; if it
saw any process that is not its own (the referee, the opponent, the test, another game's bot)
or read another process's environment, it plays an illegal action."""

import json
import os

from maag.clients import Bot, TurnResult, run_bot_blocking


def read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(4096).replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


me = os.getpid()
seen: dict[str, dict[str, str | int]] = {}
environs = []
for pid in sorted((d for d in os.listdir("/proc") if d.isdigit()), key=int):
    cmd = read(f"/proc/{pid}/cmdline")
    status = read(f"/proc/{pid}/status") or ""
    uid = next((line.split()[1] for line in status.splitlines() if line.startswith("Uid:")), "?")
    seen[pid] = {"cmd": (cmd or "")[:100], "uid": uid}
    env = read(f"/proc/{pid}/environ")
    if env is not None and int(pid) != me:
        environs.append(pid)
    try:
        seen[pid]["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError as e:
        seen[pid]["fds"] = type(e).__name__
    try:
        seen[pid]["root"] = len(os.listdir(f"/proc/{pid}/root/"))
    except OSError as e:
        seen[pid]["root"] = type(e).__name__
HOST_WORDS = ("maag.server", "minibot", " bot run")  # the referee, the opponent
others = [p for p, s in seen.items() if any(w in str(s["cmd"]) for w in HOST_WORDS)]
BREACHED = bool(others or environs or len(seen) > 8)
print("PROBE " + json.dumps({"probe": "proc", "me": me, "seen": seen, "host_processes": others,
                             "foreign_environs": environs, "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "proc-reader"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
