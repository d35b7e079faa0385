"""The network server's rooms stay rooms: every module of server/net says its job in its
docstring and none grows past 400 lines; the composition root knows the fleet by its interface
only (docs/architecture.md)."""

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


def test_the_referee_server_knows_the_fleet_by_its_interface_only() -> None:
    """net/server.py builds its fleet with fleet/fleets.py's `build_fleet` and uses it as
    fleet/interface.py's `Fleet`: a referee alone and a fleet's run the same server code."""
    tree = ast.parse((NET / "server.py").read_text())
    taken = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for alias in node.names if (node.module or "").startswith("maag.server.fleet")}
    taken |= {(alias.name, "") for node in ast.walk(tree) if isinstance(node, ast.Import)
              for alias in node.names if alias.name.startswith("maag.server.fleet")}
    assert taken == {("maag.server.fleet.interface", "Fleet"), ("maag.server.fleet.interface", "FleetParts"),
                     ("maag.server.fleet.fleets", "build_fleet")}
