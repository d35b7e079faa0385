"""Map files (spec/conquest.md §2.3): the bundled default map is the spec's, the C default
configuration agrees with it, the JSON mirror reads the same, broken files are refused with
their line and reason, and random bytes never crash the loader."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hyp
from maag.engine import Game
from maag.engine._lowlevel import ffi
from maag.engine.games.conquest import mapfile
from maag.engine.games.conquest.mapfile import MapError, parse_json, parse_text

DEFAULT = (mapfile.MAPS / "twin_k4_14.map").read_text()


def test_the_default_map_is_the_spec_s() -> None:
    m = mapfile.load("twin_k4_14")
    assert m.territories == [f"R{i}" for i in range(1, 8)] + [f"B{i}" for i in range(1, 8)]
    assert len(m.edges) == 23 and m.capital == [2, 9] and m.players == ("Red", "Blue")
    assert sorted(len(m.neighbours(t)) for t in range(14)) == [2, 2] + [3] * 6 + [4] * 6
    assert [m.neighbours(0)] == [[5, 7, 11]]  # R1: R6, B1, B5
    for p in ("Red", "Blue"):
        r = m.roster()[p]
        assert (len(r["infantry"]), len(r["artillery"]), len(r["tank"])) == (19, 6, 3)
    assert m.roster()["Red"]["tank"] == [15, 16, 17] and m.roster()["Blue"]["infantry"][:2] == [28, 29]


def test_the_c_default_configuration_is_the_parsed_file() -> None:
    game = Game("conquest", {})
    c_default = ffi.new("char[]", game.vt.config_size)
    game.vt.default_config(c_default)
    assert bytes(ffi.buffer(c_default)) == bytes(ffi.buffer(game._cfg))


def test_the_json_mirror_reads_the_same() -> None:
    m = mapfile.load("twin_k4_14")
    mirror = {
        "name": m.name, "players": list(m.players), "rounds": m.rounds, "victory": m.victory,
        "unit_types": {t.name: {"attack": t.attack, "defense": t.defense, "move": t.move, "cost": t.cost,
                                "hp": t.hp, "support": t.support, "supportable": t.supportable,
                                "blitz": t.blitz} for t in m.types},
        "territories": [{"id": t, "owner": m.players[m.owner[i]], "production": 0, "capital": i in m.capital}
                        for i, t in enumerate(m.territories)],
        "edges": [[m.territories[a], m.territories[b]] for a, b in m.edges],
        "start": [{"t": m.territories[t], "owner": m.players[o], "type": m.types[k].name, "n": 1}
                  for k, o, t in m.units],
    }
    j = parse_json(json.dumps(mirror, indent=1))
    fields = ("territories", "edges", "units", "capital", "types", "owner", "players")
    assert [getattr(j, f) for f in fields] == [getattr(m, f) for f in fields]


def _broken(old: str, new: str) -> str:
    assert old in DEFAULT
    return DEFAULT.replace(old, new, 1)


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("old", "new", "needle", "reason"), [
    ("edge R2 R3\n", "edge R2 R3\nedge R3 R2\n", "edge R3 R2", "given twice"),
    ("edge R2 R3\n", "edge R2 R2\n", "edge R2 R2", "cannot border itself"),
    ("edge R2 R3\n", "edge R2 R9\n", "edge R2 R9", "unknown territory 'R9'"),
    ("units R2 Red infantry 2 artillery 1", "units R2 Red infantry 2 cavalry 1", "cavalry",
     "unknown unit type"),
    ("units R1 Red infantry 2", "units R1 Blue infantry 2", "units R1 Blue", "cannot start in R1"),
    ("unit tank      attack 3 defense 3 move 2", "unit tank      attack 3 defense 3 move 3", "unit tank",
     "move must be 1 or 2"),
    ("rounds 35", "rounds many", "rounds many", "must be an integer"),
    ("victory capital", "victory conquest", "victory conquest", "victory must be"),
    ("conquest-map 1", "conquest-map 2", "conquest-map 2", "format version 1"),
    ("territory R3 owner Red production 0 capital", "territory R3 owner Red production 0", "edge R7 B7",
     "Red needs exactly one capital"),
])
def test_broken_maps_are_refused_with_the_line_and_the_reason(old: str, new: str, needle: str,
                                                              reason: str) -> None:
    text = _broken(old, new)
    with pytest.raises(MapError, match=reason) as e:
        parse_text(text, "broken.map")
    line = _line(text, needle) if "capital" not in reason else len(text.splitlines())
    assert str(e.value).startswith(f"broken.map:{line}: "), str(e.value)


def test_an_unreachable_capital_and_section_order() -> None:
    cut = "".join(line + "\n" for line in DEFAULT.splitlines() if line not in (
        "edge R1 B1", "edge R1 B5", "edge R5 B1", "edge R5 B5", "edge R7 B7"))
    with pytest.raises(MapError, match="capital B3 cannot be reached from R3"):
        parse_text(cut, "cut.map")
    moved = _broken("name twin_k4_14\n", "") + "name late\n"
    with pytest.raises(MapError, match=r"moved.map:\d+: 'name' out of place"):
        parse_text(moved, "moved.map")


def test_a_map_file_is_played_and_a_broken_one_refused_by_the_game(tmp_path: Path) -> None:
    small = tmp_path / "duel.map"
    small.write_text("conquest-map 1\nname duel\nplayers Red Blue\nrounds 5\nvictory capital\n"
                     "unit infantry attack 1 defense 2 move 1 cost 3 hp 1\n"
                     "territory A owner Red production 0 capital\n"
                     "territory B owner Blue production 0 capital\n"
                     "edge A B\nunits A Red infantry 3\nunits B Blue infantry 2\n")
    game = Game("conquest", {"map": str(small)})
    st = game.new_state(1)
    assert st.to_json()["units"] == {"A": [0, 1, 2], "B": [3, 4]} and game.config["rounds"] == 5
    st.random_playout()
    assert st.is_terminal
    (tmp_path / "bad.map").write_text(DEFAULT.replace("edge R2 R4\n", "edge R2 R4\nedge R2 R4\n"))
    with pytest.raises(ValueError, match=r"bad.map:\d+: edge R2 R4 given twice"):
        Game("conquest", {"map": str(tmp_path / "bad.map")})
    with pytest.raises(ValueError, match="no map 'nowhere'"):
        Game("conquest", {"map": "nowhere"})


@settings(max_examples=300, deadline=None)
@given(hyp.binary(max_size=400))
def test_random_bytes_never_crash_the_loader(data: bytes) -> None:
    try:
        mapfile.parse(data.decode("utf-8", errors="replace"), "fuzz.map")
    except MapError as e:
        assert str(e).startswith("fuzz.map:")


@settings(max_examples=300, deadline=None)
@given(hyp.lists(hyp.tuples(hyp.integers(0, 58),
                            hyp.sampled_from(["", "x", "9", "-1", "R1", "capital", "#"])), max_size=4))
def test_damaged_default_maps_are_refused_or_played(cuts: list[tuple[int, str]]) -> None:
    lines = DEFAULT.splitlines()
    for n, tok in cuts:
        words = lines[n % len(lines)].split()
        if words:
            words[len(words) // 2] = tok
        lines[n % len(lines)] = " ".join(words)
    text = "\n".join(lines)
    try:
        mapfile.parse(text, "cut.map")
    except MapError as e:
        assert str(e).startswith("cut.map:")
        return
    with tempfile.TemporaryDirectory() as d:  # a map the loader takes must be playable
        path = Path(d) / "cut.map"
        path.write_text(text)
        st = Game("conquest", {"map": str(path)}).new_state(1)
        st.random_playout()
        assert st.is_terminal
