"""Only here for what pyproject.toml cannot say: cffi's ``cffi_modules`` (the C core is
compiled at install time) and the game packages, one per folder of engine_c/games/ (so
that adding a game needs no line here). Metadata is in pyproject.toml."""

from pathlib import Path

from setuptools import setup

PARTS = {"maag.engine": "engine_c", "maag.protocol": "protocol", "maag.server": "server", "maag.bots": "bots",
         "maag.clients": "clients"}
GAMES = sorted(d.name for d in Path(__file__).resolve().parent.joinpath("engine_c", "games").iterdir()
               if (d / "__init__.py").is_file())

setup(
    packages=list(PARTS) + ["maag.engine.games"] + [f"maag.engine.games.{g}" for g in GAMES],
    package_dir=PARTS,
    cffi_modules=["engine_c/build_engine.py:ffi"],
)
