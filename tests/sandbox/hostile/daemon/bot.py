"""Hostile bot: before it connects, double-forks a daemon (a new session, its parent gone,
SIGTERM, SIGHUP and SIGINT ignored, the referee's socket closed) that names itself (the
`comm` in targets.json, which the test looks for on the host) and tries to outlive the game:
it runs for an hour, writing a line to the bot's log every 200 ms. The bot plays normally."""

import json
import os
import signal
import time
from pathlib import Path

from maag.clients import Bot, TurnResult, run_bot_blocking

here = Path(__file__).parent
targets = json.loads((here / "targets.json").read_text()) if (here / "targets.json").exists() else {}
COMM = targets.get("comm", "hostile-daemon")[:15]

first = os.fork()
if first == 0:
    os.setsid()
    middle = os.getpid()
    if os.fork() != 0:
        os._exit(0)
    try:
        with open("/proc/self/comm", "w") as f:
            f.write(COMM)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        os.closerange(3, 1024)
        # Report once the middle process is gone (a loaded machine may run this first).
        settle = time.monotonic() + 5
        while os.getppid() == middle and time.monotonic() < settle:
            time.sleep(0.01)
        print("PROBE " + json.dumps({"probe": "daemon", "pid": os.getpid(), "ppid": os.getppid(),
                                     "comm": COMM}), flush=True)
        deadline = time.monotonic() + 3600
        while time.monotonic() < deadline:
            time.sleep(0.2)
            print(f"daemon {os.getpid()} still here", flush=True)
    finally:
        os._exit(0)
os.waitpid(first, 0)  # the daemon's parent is gone: it belongs to no one now
# A game of nim through the referee can be over in milliseconds; the test looks for the
# daemon on the host every 50 ms while the match runs, so the bot plays only once the daemon
# has been there a while (well within the 10 s a bot has to say hello).
time.sleep(1.0)


class Probe(Bot):
    name = "daemon"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
