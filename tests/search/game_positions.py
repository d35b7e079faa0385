"""The games' own position builders (engine_c/games/<name>/tests/<name>_position.py, written
for their rules tests) made importable here, for the agents' tests on hand-built positions:
importing this module puts those folders on the import path."""

from __future__ import annotations

import sys
from pathlib import Path

GAMES = Path(__file__).resolve().parents[2] / "engine_c" / "games"

for _name in ("cards", "conquest"):
    _folder = str(GAMES / _name / "tests")
    if _folder not in sys.path:
        sys.path.insert(0, _folder)
