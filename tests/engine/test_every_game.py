"""The engine suite every registered game passes (OpenSpiel's habit: one interface, one
registry, one test suite). Parametrized over `registry.names()`, so a new game of
games.def is tested here without a line of this file changing; each game's own rules
tests live in its folder (engine_c/games/<name>/tests/).

Sample positions come from seeded random play (the first states of several games and
states along them), so the properties below see openings, middles and ends."""

from __future__ import annotations

import importlib.util
import random
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import msgpack
import pytest
from maag.engine import Game, GameOverError, IllegalActionError, Observation, State, registry
from maag.engine.hidden import ismcts, pimc, run_on_state
from maag.engine.search import search

from tests.cbuild import build_program

REPO = Path(__file__).resolve().parents[2]
GAMES = registry.names()


@cache
def samples(name: str) -> tuple[State, ...]:
    """Positions of `name` from seeded random play, the finished games' last ones included."""
    out: list[State] = []
    rnd = random.Random(1)
    for seed in range(1, 9):
        st = Game(name, {}).new_state(seed=seed)
        steps = 0
        while not st.is_terminal and steps < 400:
            if steps % 7 == 0:
                out.append(st.clone())
            acts = st.legal_actions()
            st.apply(acts[rnd.randrange(len(acts))])
            steps += 1
        st.seed_rng(seed)
        st.random_playout()  # to the end, in C (a heroes game is long)
        out.append(st)
    return tuple(out)


def live(name: str) -> list[State]:
    return [s for s in samples(name) if not s.is_terminal]


@pytest.mark.parametrize("name", GAMES)
def test_registry_entry_and_the_compiled_core_agree(name: str) -> None:
    spec = registry.get(name)
    game = Game(name, {})
    from maag.engine._lowlevel import ffi

    assert ffi.string(game.vt.name).decode() == spec.name
    assert spec.value_scale > 0
    assert game.vt.version >= 5
    assert set(game.config) == {o.name for o in spec.options}
    with pytest.raises(ValueError, match="unknown"):
        Game(name, {"no-such-option": 1})


def test_an_unknown_game_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: " + ", ".join(GAMES)):
        Game("chess", {})


@pytest.mark.parametrize("name", GAMES)
def test_legal_lists(name: str) -> None:
    finished = 0
    for st in samples(name):
        acts = st.legal_codes()
        if st.is_terminal:
            finished += 1
            assert acts == []
            continue
        assert len(acts) == len(set(acts)) >= 1
        ends = [a for a in acts if st.game.vt.is_end_turn(a)]
        assert len(ends) == 1, "a live state lists END_TURN exactly once"
    assert finished > 0, "random play finished no game: the samples miss the end"


def _probe_codes(st: State, rnd: random.Random) -> set[int]:
    legal = st.legal_codes()
    codes = set(legal) | {rnd.getrandbits(24) for _ in range(200)} | {0, 1, 2**24 - 1}
    for c in legal[:50]:
        codes |= {c ^ (1 << b) for b in range(24)}
    return codes


@pytest.mark.parametrize("name", GAMES)
def test_check_and_apply_agree_with_the_legal_list_and_refusals_change_nothing(name: str) -> None:
    rnd = random.Random(7)
    for st in samples(name)[::2]:
        legal = set(st.legal_codes())
        before = st.to_bytes()
        for code in _probe_codes(st, rnd):
            assert st.is_legal(code) == (code in legal), f"check and legal disagree on {code:#x}"
            trial = st.clone()
            if code in legal:
                trial.apply(code)
            else:
                with pytest.raises((IllegalActionError, GameOverError)):
                    trial.apply(code)
                assert trial.to_bytes() == before, f"a refused {code:#x} changed the state"


@pytest.mark.parametrize("name", GAMES)
def test_clone_and_hash(name: str) -> None:
    for st in live(name):
        twin = st.clone()
        assert twin == st and twin.hash() == st.hash()
        twin.apply(twin.legal_codes()[0])
        assert twin != st and twin.hash() != st.hash()
        assert st.game.state_from_json(st.to_json()).hash() == st.hash()


@pytest.mark.parametrize("name", GAMES)
def test_observations_and_determinizations(name: str) -> None:
    for i, st in enumerate(live(name)):
        assert st.observer is None
        for seat in (0, 1):
            obs = st.observation(seat)
            assert obs.observer == seat
            assert Observation.of(obs).to_bytes() == obs.to_bytes(), "observing an observation changes it"
            full = obs.determinize(seed=i)
            assert full.observer is None
            assert full.observation(seat).to_bytes() == obs.to_bytes(), \
                "a determinization is not consistent with the observation it came from"
        mover = st.observation(st.current_player)
        assert mover.legal_codes() == st.legal_codes(), "the player to act sees its own legal actions"


@pytest.mark.parametrize("name", GAMES)
def test_json_round_trips(name: str) -> None:
    for st in samples(name):
        again = st.game.state_from_json(st.to_json())
        assert again == st
        obs = st.observation(0)
        assert Observation.from_json(st.game, obs.to_json()).to_bytes() == obs.to_bytes()
        for a in st.legal_actions():
            assert st.game.action(a.to_dict()) == a
            assert st.game.action(str(a)) == a


@pytest.mark.parametrize("name", GAMES)
def test_the_c_msgpack_writer_writes_the_json_form_byte_for_byte(name: str) -> None:
    """The referee sends each observation as the game's C `write_msgpack` wrote it (the only
    serializer: `to_json` decodes it): the very bytes msgpack-python makes of that JSON form,
    for full states and both seats' observations, openings to ends (every registered game has
    the writer)."""
    game = Game(name, {})
    from maag.engine._lowlevel import ffi

    assert game.vt.version >= 7 and game.vt.write_msgpack != ffi.NULL
    for st in samples(name):
        for s in (st, st.observation(0), st.observation(1)):
            assert s.to_msgpack() == msgpack.packb(s.to_json(), use_bin_type=True)
        for seat in (0, 1):  # (the referee's way: through the Game's scratch observation)
            assert st.observation_msgpack(seat) == st.observation(seat).to_msgpack()


@pytest.mark.parametrize("name", GAMES)
def test_the_msgpack_writer_grows_a_buffer_that_is_too_small(name: str) -> None:
    st = samples(name)[0].observation(0)
    want = st.to_msgpack()
    from maag.engine.game import _kit  # (the thread's buffer to_msgpack writes into)

    _kit().grow(3)  # as if the last write had needed only 3 bytes
    assert st.to_msgpack() == want and _kit().wire.cap >= len(want)


@pytest.mark.parametrize("name", GAMES)
def test_the_legal_list_in_msgpack_is_the_packed_list_of_the_action_maps(name: str) -> None:
    """`your_turn.legal` is written in one C call from each code's packed map: the bytes of
    packb([a.to_dict() ...]), in the legal order, for full states and observations (a code
    the Game's table lacks is added on its first miss), through a buffer that must grow; and
    the packed map of each code leads back to it."""
    game = Game(name, {})
    from maag.engine.game import _kit

    fresh = samples(name)
    for st in fresh:
        for s in (st, st.observation(0)):
            want = msgpack.packb([a.to_dict() for a in s.legal_actions()], use_bin_type=True)
            assert s.legal_msgpack() == want
            for a in s.legal_actions():
                assert game.code_of_msgpack(game.action_msgpack(a.code)) == a.code
    st = fresh[len(fresh) // 2]
    _kit().grow(2)
    assert st.legal_msgpack() == msgpack.packb([a.to_dict() for a in st.legal_actions()], use_bin_type=True)


@pytest.mark.parametrize("name", GAMES)
def test_the_prompt_frame_is_its_parts_around_the_observation_and_the_legal_list(name: str) -> None:
    """`State.prompt_msgpack` (the referee's your_turn in one C call) is the 4-byte length,
    the head, `observation_msgpack(seat)`, the middle, the legal list if asked, the tail; for
    both seats of openings to ends, with empty parts, from a thread whose table starts
    empty (every code a miss first) and through a buffer that must grow."""
    import threading

    from maag.engine import game as game_module

    def check() -> None:
        with game_module._CODEBYTES_LOCK:  # (a fresh shared table: this thread's copy starts empty)
            game_module._CODEBYTES[name] = game_module._owned(game_module.lib.mg_codebytes_new())
        game_module._kit().grow(5)
        for st in samples(name):
            for seat in (0, 1):
                for head, mid, tail in ((b"\x86head", b"mid", b"tail"), (b"", b"", b"")):
                    for legal in (True, False):
                        legal_list = st.legal_msgpack() if legal else b""
                        body = head + st.observation_msgpack(seat) + mid + legal_list + tail
                        got = st.prompt_msgpack(seat, head, mid, tail, legal)
                        assert got == len(body).to_bytes(4, "big") + body

    errors: list[BaseException] = []

    def run() -> None:
        try:
            check()
        except BaseException as e:  # (reported by the test's thread)
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("name", GAMES)
def test_malformed_json_is_refused_with_an_error(name: str) -> None:
    game = Game(name, {})
    with pytest.raises(ValueError):
        game.state_from_json({"no": "state"})
    with pytest.raises(ValueError):
        game.action({"type": "no-such-action"})


@pytest.mark.parametrize("name", GAMES)
def test_evaluation_stays_within_the_value_scale(name: str) -> None:
    scale = registry.get(name).value_scale
    for st in samples(name):
        for p in (0, 1):
            v = st.evaluate(p)
            assert -scale <= v <= scale
            if st.is_terminal:
                w = st.winner
                assert v == (0.0 if w == -1 else scale if w == p else -scale)


@pytest.mark.parametrize("name", GAMES)
def test_rating_and_pruning_keep_to_the_legal_list(name: str) -> None:
    for st in live(name)[:5]:
        acts = st.legal_actions()
        kept = st.prune(acts)
        assert kept and all(a in acts for a in kept)
        assert [a for a in acts if a in kept] == kept  # order kept
        assert all(isinstance(st.rate(a), int) for a in acts)


@pytest.mark.parametrize("name", GAMES)
def test_random_playouts_end(name: str) -> None:
    for seed in range(20):
        st = Game(name, {}).new_state(seed=seed)
        st.seed_rng(seed)
        n = st.random_playout(max_actions=1_000_000)
        assert st.is_terminal and n > 0


def _plays(st: State, plan: list[Any]) -> None:
    trial = st.clone()
    for a in plan:
        trial.apply(a)
    assert trial.game.vt.is_end_turn(plan[-1].code) or trial.is_terminal


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("algo", ["mcts", "oep", "greedy-turn", "greedy-action", "ucb", "policy", "emcts",
                                  "reply"])
def test_search_kernels_return_legal_plans(name: str, algo: str) -> None:
    for st in live(name)[:3]:
        _plays(st, search(st, algo, iterations=200, seed=1).plan)


# EMCTS's other paths: FH-EMCTS's horizons (the models' turns, a genome that runs out
# inside a turn), the depth limit's rollouts, a tree that fills up.
EMCTS_VARIANTS = [{"horizon": 1}, {"horizon": 9, "model_k": 2, "tree_depth": 3, "branching": 2},
                  {"horizon": 62}, {"tree_depth": 6, "branching": 1, "max_nodes": 4}]


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("variant", range(len(EMCTS_VARIANTS)))
def test_emcts_variants_return_legal_reproducible_plans(name: str, variant: int) -> None:
    params = EMCTS_VARIANTS[variant]
    for st in live(name)[:3]:
        r = search(st, "emcts", params, iterations=150, seed=2)
        _plays(st, r.plan)
        assert (r.stats.stop, r.stats.iterations) == ("iterations", 150)
        assert [a.code for a in search(st, "emcts", params, iterations=150, seed=2).plan] == \
            [a.code for a in r.plan]


@pytest.mark.parametrize("name", GAMES)
def test_determinized_kernels_return_legal_plans(name: str) -> None:
    for st in live(name)[:3]:
        obs = Observation.of(st)
        _plays(st, pimc(obs, "mcts", k=2, iterations=200, seed=1).plan)
        _plays(st, ismcts(obs, iterations=200, seed=1).plan)
        _plays(st, run_on_state("reply-hidden", obs.as_state(), "reply", {}, k=3, iterations=200,
                                seed=1).plan)
        # three plies (greedy-reply's default in bots): the mover's own next turn after the answer
        _plays(st, run_on_state("reply-hidden", obs.as_state(), "reply", {"rollout_turns": 2}, k=2,
                                iterations=200, seed=1).plan)


def _build_engine() -> Any:
    spec = importlib.util.spec_from_file_location("build_engine", REPO / "engine_c" / "build_engine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rules_of_every_game_allocate_nothing(tmp_path: Path) -> None:
    """tests/engine/c/no_alloc.c, linked with malloc, calloc and realloc wrapped, plays 200
    games of each registered game through every rules entry; any allocation fails."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is needed to build the allocation check")
    b = _build_engine()
    exe = tmp_path / "no_alloc"
    flags = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off", "-pthread",
             *[f"-I{d}" for d in b.include_dirs()]]
    build_program(gcc, flags, [*b.sources(), REPO / "tests" / "engine" / "c" / "no_alloc.c"], exe,
                  link=["-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc", "-lm"])  # (one file per core)
    r = subprocess.run([str(exe), *GAMES], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [line.split(":")[0] for line in r.stdout.splitlines()] == GAMES
    assert all(": ok " in line for line in r.stdout.splitlines()), r.stdout


@pytest.mark.parametrize("name", GAMES)
def test_the_benches_find_mid_game_states_in_every_game(name: str) -> None:
    """`maag bench search` and `bench engine` search from `midgame_states`: every game has
    them, each with a choice to make (nim's random games end before the 20 actions asked
    for: its states come from the second half of whole games; it looped for ever before)."""
    from maag.server.bench.engine import midgame_states

    states = midgame_states(Game(name), count=6, seed=3)
    assert len(states) == 6 and len({s.hash() for s in states}) > 1
    for s in states:
        assert not s.is_terminal and s.legal_codes() != [0]
