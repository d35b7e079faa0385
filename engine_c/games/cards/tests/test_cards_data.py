"""The card data against the spec, card by card (spec/cards.md §3.3-3.4 and §4), and the
generated C table against the data: pool.py and decks.py are the one source, gen_tables.py
compiles them, and a stale cards_tables.h fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from maag.engine._lowlevel import ffi, lib
from maag.engine.games.cards.decks import DECKS
from maag.engine.games.cards.pool import POOL, TOKENS

HERE = Path(__file__).resolve().parents[1]


def spec_rows(shared: Path) -> dict[str, list[str]]:
    spec = shared / "spec" / "cards.md"
    if not spec.is_file():
        pytest.fail(f"the spec is needed beside the repository (or in $MAAG_SHARED): {spec}")
    rows = {}
    for line in spec.read_text().splitlines():
        cells = [c.strip() for c in line.strip()[1:-1].split("|")] if line.startswith("| ") else []
        if cells and (re.fullmatch(r"[NMPRS]\d\d", cells[0]) and len(cells) == 9
                      or cells[0].startswith("T_") and len(cells) == 7):
            rows[cells[0]] = cells
    return rows


def test_every_card_matches_the_spec_table(shared: Path) -> None:
    rows = spec_rows(shared)
    assert len(POOL) == 64 and len(TOKENS) == 10
    assert sorted(rows) == sorted(c.id for c in POOL + TOKENS)
    for c in POOL:
        _, name, cls, cost, typ, atk, hp, text, enc = rows[c.id]
        assert (c.name, c.cls, c.cost, c.type, c.atk, c.hp, c.text, c.enc) == (
            name, cls, int(cost), typ, int(atk or 0), int(hp or 0), text, enc.strip("`")), c.id
    for c in TOKENS:
        _, name, typ, atk, hp, enc, _made = rows[c.id]
        assert (c.name, c.type, c.atk, c.hp, c.enc) == (name, typ.split()[0], int(atk or 0), int(hp or 0),
                                                        enc.strip("`")), c.id


def test_the_decklists_hold_thirty_cards_within_the_copy_limits() -> None:
    legendary = {c.id for c in POOL if "LEGENDARY" in c.enc}
    for name, (hero, cards) in DECKS.items():
        assert sum(n for _, n in cards) == 30, name
        assert all(n <= (1 if cid in legendary else 2) for cid, n in cards), name
        assert hero in ("MAGE", "PALADIN")


def test_the_compiled_table_is_up_to_date_and_agrees_with_the_data() -> None:
    r = subprocess.run([sys.executable, str(HERE / "gen_tables.py"), "--print"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (HERE / "cards_tables.h").read_text(), "cards_tables.h is stale: run gen_tables.py"
    assert lib.cd_card_count() == 74
    for i, c in enumerate(POOL + TOKENS, 1):
        info = lib.cd_card_info(i)
        assert ffi.string(info.id).decode() == c.id and info.cost == c.cost and info.atk == c.atk
        assert info.hp == c.hp and info.legendary == ("LEGENDARY" in c.enc)
    assert lib.cd_card_info(0) == ffi.NULL and lib.cd_card_info(75) == ffi.NULL


def test_every_clause_of_every_encoding_compiles() -> None:
    sys.path.insert(0, str(HERE))
    import gen_tables

    for c in POOL + TOKENS:
        kw, ops = gen_tables.compile_enc(c)
        clauses = [x for x in c.enc.split(";") if x and x not in gen_tables.KEYWORDS + ["LEGENDARY"]]
        assert len(ops) == len(clauses), c.id
    with pytest.raises(ValueError):
        gen_tables.compile_enc(POOL[0]._replace(enc="SP:NOPE(1"))
