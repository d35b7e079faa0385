"""Only here for what pyproject.toml cannot say: cffi's ``cffi_modules`` (the C core is
compiled at install time) and the package list, read from the folders (every folder with an
__init__.py under a part, its tests/ excepted), so that adding a game (a folder of
engine_c/games/) or a room of the server needs no line here. Metadata is in pyproject.toml.

MAAG_SDK_ONLY=1 installs the Python bot SDK alone (maag.clients and the maag.protocol it
uses): no C compiler needed, nothing compiled (README.md, "Writing a bot")."""

import os
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
# Each top-level folder is one part of the `maag` namespace.
PARTS = {"maag.engine": "engine_c", "maag.protocol": "protocol", "maag.stats": "stats",
         "maag.server": "server", "maag.bots": "bots", "maag.clients": "clients"}


def packages() -> list[str]:
    out = []
    for name, folder in PARTS.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            if "tests" not in rel.parts:
                out.append(".".join([name, *rel.parts]))
    return out


if os.environ.get("MAAG_SDK_ONLY") == "1":
    SDK = {k: v for k, v in PARTS.items() if k in ("maag.protocol", "maag.clients")}
    setup(packages=list(SDK), package_dir=SDK, package_data={}, entry_points={})
else:
    setup(packages=packages(), package_dir=PARTS, cffi_modules=["engine_c/build_engine.py:ffi"])
