"""The network server's rooms stay rooms: every module of server/net says its job in its
docstring and none grows past 400 lines (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

NET = Path(__file__).resolve().parents[2] / "server" / "net"


def test_every_module_of_server_net_is_small_and_says_its_job() -> None:
    modules = sorted(NET.glob("*.py"))
    assert len(modules) >= 8
    for path in modules:
        text = path.read_text()
        assert len(text.splitlines()) <= 400, f"{path.name} has over 400 lines: split it into rooms"
        assert ast.get_docstring(ast.parse(text)), f"{path.name} says nothing of its job"
