"""Text a participant controls, made safe to show a person.

A bot's log, a build's log, a manifest's notes, a verdict's detail: whatever a stranger's
program wrote can reach a terminal (`maag replay`, `maag match`, `maag bot submit`) or a
page. Raw, its control characters drive the terminal (ESC sequences set the window title,
write the clipboard with OSC 52, clear the screen; a carriage return or cursor moves
overwrite a line with a fake one) and Unicode's bidi overrides and other invisible format
characters make text read differently from what it is. `printable` shows each of them as a
visible escape instead, so the text is still there to read but does nothing.

It lives at the top of maag.server, importing nothing of maag, because every room that shows
such text uses it: the command line (cli/), the error messages of hosted bots' builds
(hosting/) and the web view's JSON (web/); none of those rooms is a place the
others should import for it (docs/architecture.md, tests/test_layers.py: all of them are in
the server part, which may import its own modules freely).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Format characters (Cf: bidi embeddings, overrides and isolates U+202A-U+202E and
# U+2066-U+2069, the marks U+200E/U+200F/U+061C, zero-width spaces and joiners, U+FEFF, soft
# hyphen, tag characters...) are invisible yet change how the text around them reads; line and
# paragraph separators (Zl, Zp) break lines where no \n is; surrogates (Cs), unpaired in a
# str, cannot even be encoded to print. All of them are escaped; everything else that is not
# a control character prints as itself.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_KEPT = frozenset("\n\t")

# Which characters need a look at all: anything outside printable ASCII (and \n, \t). Plain
# text, the common case, goes through one regular-expression search untouched.
_SUSPECT = re.compile(r"[^\t\n\x20-\x7e]")


def _escape(c: str) -> str:
    if c in _KEPT:
        return c
    if c == "\r":
        return "\\r"
    if unicodedata.category(c) not in _ESCAPED_CATEGORIES:
        return c
    n = ord(c)
    if n <= 0xFF:  # C0, DEL and C1 as \xNN (ESC is \x1b, CSI \x9b)
        return f"\\x{n:02x}"
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def printable(text: str) -> str:
    """`text` with every character that could drive a terminal or fake what a reader sees
    shown as a visible escape: C0 and C1 control characters and DEL as `\\x1b`, `\\x9b`,
    `\\x7f`, a carriage return as `\\r` (a Windows line end, \\r\\n, is just a line end),
    bidi overrides and isolates and the other format characters as `\\u202e` and the like.
    Printable characters, \\n and \\t are kept; text of those alone is returned unchanged, so
    `printable(printable(x)) == printable(x)`. Backslashes are kept as they are: the result
    is for a person to read, not to be decoded."""
    if not _SUSPECT.search(text):
        return text
    return _SUSPECT.sub(lambda m: _escape(m.group()), text.replace("\r\n", "\n"))


def printable_all(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, tuples, strings, numbers) with `printable` applied
    to every string in it, the keys of dicts included: for a whole report or verdict a page
    gets as JSON. Anything else is returned as it is."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_all(v) for v in value]
    return value
