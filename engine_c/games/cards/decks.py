"""The fixed decklists of spec/cards.md §4 and their heroes (the conformance traces' pairing:
deck M plays the Mage, decks P and X the Paladin)."""

from __future__ import annotations

DECKS: dict[str, tuple[str, list[tuple[str, int]]]] = {
    "M": ("MAGE", [
        ("M01", 2), ("M04", 2), ("M03", 1), ("M05", 2), ("M06", 1), ("M08", 2), ("M09", 1), ("M10", 2),
        ("M11", 1), ("M12", 1), ("N09", 2), ("N07", 1), ("N13", 1), ("N12", 2), ("N17", 1), ("N15", 1),
        ("N24", 2), ("N25", 2), ("N30", 1), ("N27", 1), ("N31", 1),
    ]),
    "P": ("PALADIN", [
        ("P01", 1), ("P03", 1), ("P04", 2), ("P05", 1), ("P06", 2), ("P07", 2), ("P08", 2), ("P09", 2),
        ("P10", 1), ("P11", 1), ("P12", 1), ("N01", 2), ("N10", 1), ("N11", 2), ("N08", 1), ("N21", 2),
        ("N22", 2), ("N26", 1), ("N29", 1), ("N24", 2),
    ]),
    "X": ("PALADIN", [
        ("R01", 2), ("R03", 2), ("R02", 2), ("R04", 1), ("S01", 2), ("S02", 1), ("S03", 1), ("N03", 2),
        ("N04", 1), ("N05", 2), ("N06", 1), ("N02", 1), ("N08", 1), ("N20", 2), ("N19", 1), ("N18", 1),
        ("N16", 1), ("N23", 1), ("N32", 1), ("N27", 1), ("N33", 1), ("N14", 1), ("N29", 1),
    ]),
}
"""Deck name -> (hero, [(card id, copies)]); 30 cards each."""
