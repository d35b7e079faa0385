"""Runs the JavaScript client's own tests (node's built-in runner) so CI runs them too."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parents[2] / "clients" / "js"


def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail("node is not installed (the JS client's tests need Node.js >= 18)")
        pytest.skip("node is not installed")
    return exe


def test_js_client_suite() -> None:
    r = subprocess.run([node(), "--test", "test/"], cwd=JS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "# fail 0" in r.stdout
