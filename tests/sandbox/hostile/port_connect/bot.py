"""Hostile bot: connects to the addresses in targets.json (a port the test listens on at
127.0.0.1, the usual ones: PostgreSQL, ssh, a Dask scheduler; an address outside the
machine) and says hello to whatever answers. Prints each attempt's outcome as a
`PROBE {...}` line; if any connection was made, it plays an illegal action."""

import json
import os
import socket
from pathlib import Path

from maag.clients import Bot, TurnResult, run_bot_blocking

here = Path(__file__).parent
targets = json.loads((here / "targets.json").read_text()) if (here / "targets.json").exists() else {}
addresses = [(host, int(port)) for host, port in targets.get("addresses", [])]

attempts = {}
for host, port in addresses:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2.0)
    try:
        s.connect((host, port))
        s.sendall(b"hostile bot was here\n")
        attempts[f"{host}:{port}"] = "connected"
    except OSError as e:
        attempts[f"{host}:{port}"] = type(e).__name__ + (f" {e.errno}" if e.errno else "")
    finally:
        s.close()
BREACHED = any(v == "connected" for v in attempts.values())
print("PROBE " + json.dumps({"probe": "port", "attempts": attempts,
                             "interfaces": [name for _, name in socket.if_nameindex()],
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "port-connect"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
