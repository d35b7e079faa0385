"""The commands a host copies from the docs, read from the Markdown itself: a changed doc
changes the test. `commands(doc)` gives every `maag ...` line of the doc's ```sh blocks
(continuation lines joined, the trailing comment dropped) with its line number;
`systemd_unit(doc)` the Environment= and ExecStart= of the doc's ```ini unit."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


@dataclass(frozen=True)
class DocCommand:
    doc: str
    line: int
    text: str
    """The command as a shell would read it (continuations joined, no comment)."""

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text)

    def where(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def _blocks(doc: Path, lang: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each fenced block of language `lang`."""
    out: list[tuple[int, list[str]]] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == f"```{lang}":
            start, body = i + 2, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            out.append((start, body))
        i += 1
    return out


def _strip_comment(text: str) -> str:
    """The command without its trailing `# comment` (a # inside quotes, or inside a word, stays)."""
    quote: str | None = None
    for k, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (k == 0 or text[k - 1].isspace()):
            return text[:k].rstrip()
    return text.rstrip()


def commands(name: str, first_word: str = "maag") -> list[DocCommand]:
    """Every command of docs/NAME's ```sh blocks whose program (after VAR=value
    assignments) is `first_word`."""
    doc = DOCS / name
    out = []
    for start, body in _blocks(doc, "sh"):
        k = 0
        while k < len(body):
            line_no, text = start + k, body[k]
            while text.rstrip().endswith("\\") and k + 1 < len(body):
                k += 1
                text = text.rstrip()[:-1] + " " + body[k].strip()
            k += 1
            text = _strip_comment(text.strip())
            words = text.split()
            prog = next((w for w in words if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", w)), "")
            if prog == first_word:
                out.append(DocCommand(name, line_no, text))
    return out


def section_of(name: str, line: int) -> str:
    """The heading line docs/NAME's line `line` falls under ("" before the first)."""
    heading = ""
    fenced = False
    for text in (DOCS / name).read_text(encoding="utf-8").splitlines()[:line]:
        if text.startswith("```"):
            fenced = not fenced
        elif text.startswith("#") and not fenced:
            heading = text.lstrip("#").strip()
    return heading


def find(name: str, pattern: str, section: str = "") -> DocCommand:
    """The one command of docs/NAME matching the regular expression `pattern` (in the section
    whose heading starts with `section`, when given)."""
    got = [c for c in commands(name) if re.search(pattern, c.text)
           and section_of(name, c.line).startswith(section)]
    assert len(got) == 1, f"docs/{name}: {len(got)} commands match {pattern!r}: {[c.where() for c in got]}"
    return got[0]


@dataclass(frozen=True)
class Unit:
    environment: dict[str, str]
    exec_start: str


def systemd_unit(name: str) -> Unit:
    """The systemd unit of docs/NAME (its one ```ini block)."""
    ((_, body),) = _blocks(DOCS / name, "ini")
    env: dict[str, str] = {}
    exec_start = ""
    k = 0
    while k < len(body):
        text = body[k]
        while text.rstrip().endswith("\\") and k + 1 < len(body):
            k += 1
            text = text.rstrip()[:-1] + " " + body[k].strip()
        k += 1
        if text.startswith("Environment="):
            key, _, value = text[len("Environment="):].partition("=")
            env[key] = value
        elif text.startswith("ExecStart="):
            exec_start = text[len("ExecStart="):]
    assert exec_start, f"docs/{name}: the unit has no ExecStart"
    return Unit(env, exec_start)
