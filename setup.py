"""Only here for what pyproject.toml cannot say: cffi's ``cffi_modules`` (the C core is
compiled at install time), the package list, read from the folders (every folder with an
__init__.py under a part, its tests/ excepted), and the dependencies, which depend on the
SDK-only switch. The rest of the metadata is in pyproject.toml.

``MAAG_SDK_ONLY=1 pip install .`` installs the bot SDK alone: maag.protocol and
maag.clients, pure Python, depending on msgpack only, with no C core to compile and no
`maag` command (its modules are left out). A bot written with maag.clients needs nothing
more (README.md, "Writing your own bot")."""

import os
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent
# Each top-level folder is one part of the `maag` namespace.
PARTS = {"maag.engine": "engine_c", "maag.protocol": "protocol", "maag.stats": "stats",
         "maag.server": "server", "maag.bots": "bots", "maag.lab": "lab", "maag.clients": "clients",
         "maag.rl": "rl"}
REQUIRES = ["cffi>=1.16", "rich>=13", "numpy>=1.24", "scipy>=1.10", "psycopg[binary]>=3.1", "msgpack>=1.0",
            "distributed>=2024.1", "matplotlib>=3.7", "tomli>=2; python_version < '3.11'", "aiohttp>=3.9",
            "neat-python>=2.0", "pyseccomp>=0.1.2"]

# The SDK: what a bot needs to play on a referee (the wire and the client), nothing that
# imports the engine (tests/test_lint.py keeps clients -> protocol the only direction).
SDK_PARTS = ("maag.protocol", "maag.clients")
SDK_REQUIRES = ["msgpack>=1.0"]
SDK_ONLY = os.environ.get("MAAG_SDK_ONLY", "").strip().lower() not in ("", "0", "false", "no")


def packages(parts: dict[str, str]) -> list[str]:
    out = []
    for name, folder in parts.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            if "tests" not in rel.parts:
                out.append(".".join([name, *rel.parts]))
    return out


class SdkDistribution(Distribution):
    """The SDK-only build: pyproject.toml's scripts and entry points name modules of the
    parts it leaves out (`maag` is maag.server.cli), and that table cannot depend on a
    switch, so they are dropped once it has been read."""

    def parse_config_files(self, *args: Any, **kwargs: Any) -> None:
        super().parse_config_files(*args, **kwargs)
        self.entry_points = None


if SDK_ONLY:
    sdk = {name: folder for name, folder in PARTS.items() if name in SDK_PARTS}
    setup(packages=packages(sdk), package_dir=sdk, install_requires=SDK_REQUIRES, distclass=SdkDistribution)
else:
    setup(packages=packages(PARTS), package_dir=PARTS, install_requires=REQUIRES,
          cffi_modules=["engine_c/build_engine.py:ffi"])
