"""maag.rl.encoding: the action table and the observation vector of every registered game."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest
from maag.engine import Game, registry
from maag.rl.encoding import ActionTable, NoActionTable, ObservationEncoder, game_spaces

from .helpers import quick_options

GAMES = registry.names()


def field_by_field(encoder: ObservationEncoder, raw: bytes) -> np.ndarray:
    """What encode_bytes computes, the slow, obvious way: one read per field."""
    parts = []
    for r in encoder.runs:
        values = np.frombuffer(raw, dtype=r.dtype, count=r.count, offset=r.offset)
        if r.bits:
            parts.append(np.unpackbits(values.astype(r.dtype.newbyteorder("<")).view(np.uint8),
                                       bitorder="little").astype(np.float32))
        else:
            parts.append(values.astype(np.float32))
    return np.concatenate(parts)


@pytest.mark.parametrize("game", GAMES)
def test_every_legal_code_is_in_the_table_and_vectors_keep_their_bounds(game: str) -> None:
    g = Game(game, quick_options(game))
    table, encoder = ActionTable(g), ObservationEncoder(g)
    assert len(set(table.codes.tolist())) == len(table) > 1
    assert encoder.size == len(encoder.names) == len(encoder.low) == len(encoder.high)
    for seed in range(4):
        st = g.new_state(seed)
        while not st.is_terminal:
            legal = st.legal_codes()
            mask = table.mask(legal)  # KeyError for a code missing from the table
            assert mask.sum() == len(legal)
            assert [table.code(table.index(c)) for c in legal] == legal
            for seat in (0, 1):
                v = encoder.encode(st.observation(seat))
                assert np.array_equal(v, field_by_field(encoder, st.observation(seat).to_bytes()))
                assert v.dtype == np.float32 and v.shape == (encoder.size,)
                assert np.all(v >= encoder.low) and np.all(v <= encoder.high)
            st.apply(legal[seed % len(legal)] if seed else legal[-1])


@pytest.mark.parametrize("game", GAMES)
def test_the_vector_has_one_length_for_every_configuration(game: str) -> None:
    assert ObservationEncoder(Game(game)).size == ObservationEncoder(Game(game, quick_options(game))).size


def test_a_full_state_is_refused() -> None:
    g = Game(GAMES[0])
    with pytest.raises(ValueError, match="observation"):
        ObservationEncoder(g).encode(g.new_state(1))


def test_out_of_table_indices_and_codes_are_named() -> None:
    table = ActionTable(Game(GAMES[0]))
    with pytest.raises(IndexError):
        table.code(len(table))
    with pytest.raises(KeyError, match="action table"):
        table.index(2**32 - 1)


def test_a_game_without_a_table_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="unknown game"):
        game_spaces("no-such-game")
    game = GAMES[0]

    def missing(name: str) -> None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(NoActionTable, match=f"{game}.*spaces.py"):
        game_spaces(game)


@pytest.mark.parametrize("game", GAMES)
def test_bits_and_values_are_read_in_the_field_order(game: str) -> None:
    g = Game(game)
    encoder = ObservationEncoder(g)
    obs = g.new_state(3).observation(0)
    v = encoder.encode(obs)
    assert encoder.names[0] and len(set(encoder.names)) == encoder.size
    assert np.any(v != 0)


@pytest.mark.parametrize("game", GAMES)
def test_fields_that_are_no_features_are_left_out(game: str) -> None:
    encoder = ObservationEncoder(Game(game))
    fields = {re.sub(r"\.bit\d+$", "", re.sub(r"\[\d+\]", "", n)) for n in encoder.names}
    for skipped in encoder.skipped:
        assert not [f for f in fields if f == skipped or f.startswith(skipped + ".")], skipped


def test_a_wrong_field_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    game = GAMES[0]
    monkeypatch.setattr(game_spaces(game), "NOT_FEATURES", ("no_such_field",), raising=False)
    with pytest.raises(RuntimeError, match="no_such_field"):
        ObservationEncoder(Game(game))
