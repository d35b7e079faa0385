"""maag.server.printable (issue 53): a participant's text shown to a person never carries a
character that drives a terminal or fakes what is read, and plain text goes through as it is."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st
from maag.server.printable import printable, printable_all

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
# Characters a hostile log would use, drawn often so that every kind meets every other.
NASTY = st.sampled_from(["\x1b", "\x9b", "\x07", "\r", "\r\n", "\x00", "\x7f", "\x85", "\x0b", "\x0c",
                         "\u2028", "\u2029", "\u200b", "\u200e", "\ufeff", "\U000e0041", "\ud800",
                         "\\", "[", "]", "\n", "\t", *BIDI])
TEXT = st.lists(st.one_of(st.text(max_size=8), NASTY), max_size=30).map("".join)
PLAIN = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))
                | st.sampled_from("\n\t"))


def unsafe(text: str) -> list[str]:
    """The characters of `text` that no person's screen may get raw."""
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


@given(TEXT)
def test_no_control_bidi_or_format_character_survives(text: str) -> None:
    out = printable(text)
    assert unsafe(out) == [], (text, out)
    out.encode("utf-8")  # an unpaired surrogate would not even print
    assert printable(out) == out  # escaping twice changes nothing: a message built from an escaped tail


@given(PLAIN)
def test_plain_text_is_unchanged(text: str) -> None:
    assert printable(text) == text


@given(TEXT)
def test_nothing_but_the_unsafe_characters_changes(text: str) -> None:
    """Every printable character, line break and tab is kept, in order: removing the escapes'
    text from the output gives the input less its unsafe characters (and the \\r of \\r\\n)."""
    kept = "".join(c for c in text.replace("\r\n", "\n") if not unsafe(c))
    out = printable(text)
    # The escapes are \xNN, \r, \uNNNN, \UNNNNNNNN: as many of them as unsafe characters.
    assert out.count("\\") == kept.count("\\") + len(unsafe(text.replace("\r\n", "\n")))


def test_the_escapes_a_reader_sees() -> None:
    attack = ("\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b2J ok\rFAKE \u202eevil\u2066x\u2069 "
              "[red]x[/red] \x7f\x00\tend\r\n")
    assert printable(attack) == ("\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b2J ok\\rFAKE "
                                 "\\u202eevil\\u2066x\\u2069 [red]x[/red] \\x7f\\x00\tend\n")
    assert printable("a\U000e0041b\ud800") == "a\\U000e0041b\\ud800"
    assert printable("é 日本 😀 ≠") == "é 日本 😀 ≠"


def test_printable_all_escapes_every_string_of_a_report() -> None:
    report = {"verdict": {"seat": 1, "kind": "crash", "detail": "\x1b[2J"}, "games": [("\u202e", 3, None)],
              "k\x07": True}
    assert printable_all(report) == {"verdict": {"seat": 1, "kind": "crash", "detail": "\\x1b[2J"},
                                     "games": [["\\u202e", 3, None]], "k\\x07": True}
    assert printable_all(None) is None


def test_the_commands_log_lines_are_escaped() -> None:
    """What a command logs to the host's terminal (`setup_logging`: a forfeit's detail, a
    build's error in a traceback) is escaped too: a real process, its standard error as bytes."""
    code = ("import logging\n"
            "from maag.server.cli.common import setup_logging\n"
            "setup_logging(0)\n"
            "logging.getLogger('t').warning('detail: %s', '\\x1b]0;TITLE\\x07 \\u202eevil')\n"
            "try:\n"
            "    raise RuntimeError('log ends with:\\n\\x1b[2J')\n"
            "except RuntimeError:\n"
            "    logging.getLogger('t').exception('processing failed')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"\x1b" not in r.stderr and unsafe(r.stderr.decode()) == [], r.stderr
    assert b"detail: \\x1b]0;TITLE\\x07 \\u202eevil" in r.stderr and b"\\x1b[2J" in r.stderr, r.stderr
