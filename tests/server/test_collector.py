"""The referee process's garbage collector (server/net/loop.py `tune_collector`), in a
process of its own (what it freezes is never collected: not in the suite's process)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import gc, json, weakref
from maag.server.net.loop import COLLECT_EVERY, tune_collector
import maag.server.net.server  # (the referee's modules, alive before it is tuned)
gc.collect()
before = len(gc.get_objects())  # (what lives, its garbage collected)
tune_collector()
frozen = gc.get_freeze_count()
class Node:
    pass
a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after: still collected
gone = weakref.ref(a)
del a, b
collected = gc.collect()
print(json.dumps({"before": before, "frozen": frozen, "threshold": list(gc.get_threshold()),
                  "every": COLLECT_EVERY, "cycle_gone": gone() is None, "collected": collected}))
"""


def test_a_referee_process_freezes_what_lives_at_its_start_and_collects_less_often() -> None:
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["frozen"] >= 0.99 * out["before"] and out["before"] > 10_000  # what lives: frozen
    assert out["threshold"] == [out["every"], 10, 10] and out["every"] > 700
    assert out["cycle_gone"] and out["collected"] >= 2  # what is made after is collected as before
