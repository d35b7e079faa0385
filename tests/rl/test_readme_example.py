"""README's reinforcement-learning example runs as written: a random policy plays one game to
its end, each agent seeing the end once."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_plays_a_game() -> None:
    section = README.read_text().split("## Reinforcement learning", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    lines = out.getvalue().split()
    assert sorted(lines[0::2]) == ["player_0", "player_1"]
    assert sorted(float(r) for r in lines[1::2]) in ([-1.0, 1.0], [0.0, 0.0])
