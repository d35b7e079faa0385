"""A web server killed with -9 while it validates an upload: the next start validates it
again, and nothing stays `building` or `validating` (issue 43)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from .uploads import call, need_sandbox, package, serve, targz, upload, wait_final


def test_a_server_killed_mid_validation_validates_again_on_restart(tmp_path: Path) -> None:
    need_sandbox()
    # A bot that takes 2 s to start: its validation lasts long enough to be interrupted.
    slow = package(tmp_path, "slow", prelude="import time\ntime.sleep(2)")
    s = serve(tmp_path)
    try:
        token = s.token("alice")
        st, ans, _ = upload(s, "alice", targz(slow), token)
        assert st == 202, ans
        end = time.monotonic() + 60
        while True:
            st, v, _ = call(s, "GET", "/api/bots/alice/versions/1")
            if v["status"] == "validating":
                break
            assert v["status"] in ("pending", "building"), v
            assert time.monotonic() < end, v
            time.sleep(0.05)
        assert s.proc is not None
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(10)
    finally:
        s.stop()
    (tmp_path / "port").unlink()  # (the new server writes its own)
    again = serve(tmp_path)  # the same folder: the same database
    try:
        v = wait_final(again, "alice", 1)
        assert v["status"] == "active", v
        st, page, _ = call(again, "GET", "/api/bots/alice")
        assert all(x["status"] not in ("building", "validating") for x in page["versions"])
    finally:
        again.stop()
