"""The code style bar: ruff and mypy clean over the whole repository."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["engine_c", "protocol", "stats", "server", "bots", "lab", "clients", "rl"]


def test_ruff_clean() -> None:
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_clean() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy", *PACKAGES], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# server/referee/__init__.py is being rewritten by the hot-path work (issue 42); its list
# of modules lacks schema.py and spectator.py until then.
UNLISTED_FOR_NOW: set[str] = set()


def test_every_package_says_what_each_of_its_modules_does() -> None:
    """A reader's check (docs/architecture.md): a folder's __init__.py names each of its
    modules and subpackages (a game's own tests/ and a bot package's folder excepted)."""
    import ast

    missing = []
    for folder in PACKAGES:
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            here = init.parent
            rel = here.relative_to(ROOT).as_posix()
            if "tests" in here.parts or "packages" in here.parts or rel in UNLISTED_FOR_NOW:
                continue
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
            names = [p.stem for p in here.glob("*.py") if p.name != "__init__.py"]
            names += [p.name for p in here.iterdir() if (p / "__init__.py").is_file()]
            missing += [f"{rel}: {name}" for name in sorted(names) if name not in doc]
    assert not missing, "modules their package's docstring does not name:\n" + "\n".join(missing)
