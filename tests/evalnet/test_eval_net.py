"""The heroes feature vector (mg_game_vt.features), the NEAT network evaluator in C
(mg_eval_net.c) against hand computation and against neat-python itself, eval=neat in the
search agents, and bad network files. Also run under the sanitizers (tests/engine/
test_sanitizer.py)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import neat
import pytest
from maag.bots import make_agent
from maag.bots.agents import AgentError
from maag.engine import ConfigError, Game, State
from maag.engine.evalnet import NetworkFileError, load_network
from maag.engine.search import search

from .nets import config, constant, export, hand_written, random_genome, write

TINY = Game("heroes", {"map": "a-tiny", "draws": "seeded"})
MAP_A = Game("heroes", {"map": "a", "draws": "seeded"})
N = 55


def played(game: Game, seed: int, actions: int) -> State:
    """A position `actions` random legal actions into a game."""
    st = game.new_state(seed=seed)
    rng = random.Random(seed)
    for _ in range(actions):
        if st.is_terminal:
            break
        codes = st.legal_codes()
        st.apply(codes[rng.randrange(len(codes))])
    return st


# ---- features -------------------------------------------------------------------------------

def test_features_of_the_first_position_and_after_a_deploy() -> None:
    st = TINY.new_state(seed=1)
    side = [0.0] * 11 + [1.0, 1.0] + [0.0] * 4 + [0.2] * 6 + [1.0, 1.0, 5 / 30]
    assert st.features(0) == pytest.approx(side + side + [1.0, 0.6, 0.01])
    assert st.features(1) == pytest.approx(side + side + [0.0, 0.6, 0.01])
    st.apply(TINY.action({"type": "deploy", "card": "archer", "to": [0, 0]}))
    f = st.features(0)
    me = [0.0, 0.2, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 1.0, 0, 0, 0, 0, 0.2, 0.0, 0.2, 0.2, 0.2, 0.2, 1.0,
          5 / 6, 5 / 30]
    assert f == pytest.approx(me + side + [1.0, 0.4, 0.01])
    assert st.features(1) == pytest.approx(side + me + [0.0, 0.4, 0.01])


def test_features_see_only_what_the_player_sees() -> None:
    """An observation of either seat and any determinization give the same vector: the
    opponent's hand enters only as hand + deck, which every sample keeps."""
    for seed in range(1, 30):
        st = played(MAP_A, seed, 3 * seed)
        for p in (0, 1):
            f = st.features(p)
            assert len(f) == N and all(math.isfinite(x) for x in f)
            assert st.observation(p).features(p) == f
            assert st.observation(1 - p).features(p) == f
            assert st.observation(p).determinize(seed).features(p) == f


@pytest.mark.parametrize("name", ["nim", "cards", "conquest"])
def test_a_game_without_features_says_so(name: str) -> None:
    with pytest.raises(ConfigError, match=f"the game '{name}' has no feature vector"):
        Game(name).new_state(seed=1).features(0)


# ---- the network evaluator ---------------------------------------------------------------------

def test_a_hand_written_network_gives_the_hand_computed_value(tmp_path: Path) -> None:
    net = load_network(write(tmp_path / "h.json", hand_written()))
    x1, x2 = 0.2, 0.4
    h = math.tanh(max(-60, min(60, 2.5 * (0.5 + 1.0 * (2.0 * x1 - 1.0 * x2)))))
    z = -0.1 + 2.0 * (1.5 * h + 0.3 * x1)
    assert net.activate([x1, x2]) == pytest.approx(1 / (1 + math.exp(-5 * z)), rel=1e-15)
    assert net.activate([0.0, 0.0]) == pytest.approx(1 / (1 + math.exp(-5 * (-0.1 + 3.0 * math.tanh(1.25)))))


@pytest.mark.parametrize("every_function", [False, True])
def test_the_c_network_equals_neat_python_on_random_genomes(tmp_path: Path, every_function: bool) -> None:
    cfg = config(tmp_path, every_function=every_function)
    rng = random.Random(5)
    hidden = 0
    for k in range(25):
        g = random_genome(cfg, k, mutations=k % 12, rng_seed=100 + k)
        hidden += len(g.nodes) - 1
        ref = neat.nn.FeedForwardNetwork.create(g, cfg)
        net = load_network(export(g, cfg, tmp_path / f"g{k}.json"))
        for _ in range(10):
            x = [rng.uniform(-2, 2) for _ in range(N)]
            want = ref.activate(x)[0]
            assert net.activate(x) == pytest.approx(want, rel=1e-9, abs=1e-12), (k, x)
    assert hidden > 10  # the genomes grew hidden nodes, so order and links were exercised


def test_a_network_without_connections_equals_neat_python(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    g = random_genome(cfg, 1, mutations=0, rng_seed=1)
    for c in g.connections.values():
        c.enabled = False
    want = neat.nn.FeedForwardNetwork.create(g, cfg).activate([1.0] * N)[0]
    assert load_network(export(g, cfg, tmp_path / "off.json")).activate([1.0] * N) == want
    d = hand_written(N)  # a file without the output node: it outputs 0
    d["nodes"] = [n for n in d["nodes"] if n["id"] != 0]
    d["connections"] = [c for c in d["connections"] if c["to"] != 0]
    assert load_network(write(tmp_path / "no-output.json", d)).activate([1.0] * N) == 0.0


def test_the_search_uses_the_network_scaled_to_half_the_win_value(tmp_path: Path) -> None:
    st = played(TINY, 4, 6)
    for value in (0.3, -0.7, 5.0):
        net = load_network(write(tmp_path / f"c{value}.json", constant(value, N)))
        r = search(st, "greedy-action", {"eval_net": net}, seed=1)
        assert r.stats.value == pytest.approx(max(-1.0, min(1.0, value)) * 30000.0)
    plain = search(st, "greedy-action", {}, seed=1)
    assert plain.stats.value != pytest.approx(9000.0)


# ---- eval=neat in the agents --------------------------------------------------------------------

AGENTS = ["greedy-action", "greedy-turn", "greedy-reply", "mcts", "ne-mcts", "bb-mcts", "oep", "ucb", "uct",
          "pimc", "ismcts"]


@pytest.mark.parametrize("name", AGENTS)
def test_eval_neat_plans_are_legal_and_reproducible(tmp_path: Path, name: str) -> None:
    cfg = config(tmp_path)
    path = export(random_genome(cfg, 1, mutations=6, rng_seed=3), cfg, tmp_path / "net.json")
    agent = make_agent(name, f"eval=neat:{path}")
    iterations = {"oep": 5, "pimc": 40, "greedy-action": None}.get(name, 60)
    for game, seed in ((TINY, 2), (MAP_A, 7)):
        st = played(game, seed, 4)
        plan = agent.plan(st, iterations=iterations, seed=21)
        assert plan == agent.plan(st, iterations=iterations, seed=21)
        s = st.clone()
        for a in plan:
            assert s.is_legal(a), (name, a)
            s.apply(a)
        assert plan[-1].to_dict() == {"type": "end_turn"} or s.is_terminal


def test_eval_neat_changes_the_choice(tmp_path: Path) -> None:
    """A network that likes what the heuristic dislikes: a different plan somewhere."""
    cfg = config(tmp_path)
    differ = 0
    for k in range(4):
        path = export(random_genome(cfg, k, mutations=2, rng_seed=50 + k), cfg, tmp_path / f"n{k}.json")
        for seed in range(3):
            st = played(MAP_A, seed + 10, 8)
            a = make_agent("greedy-turn").plan(st, iterations=200, seed=1)
            b = make_agent("greedy-turn", f"eval=neat:{path}").plan(st, iterations=200, seed=1)
            differ += a != b
    assert differ > 0


# ---- bad files -------------------------------------------------------------------------------

def _broken() -> list[tuple[str, object, str]]:
    good = hand_written(N)
    cases: list[tuple[str, object, str]] = [("text", "{not json", "not JSON"),
                                            ("list", [1, 2], "no JSON object")]

    def edit(name: str, reason: str, fn) -> None:  # type: ignore[no-untyped-def]
        d = json.loads(json.dumps(good))
        fn(d)
        cases.append((name, d, reason))

    edit("recurrent", "network_type must be 'feedforward'", lambda d: d.update(network_type="recurrent"))
    edit("version", "format_version '9' is not neat-python's", lambda d: d.update(format_version="9"))
    edit("outputs", "exactly one output", lambda d: d["topology"].update(output_keys=[0, 2], num_outputs=2))
    edit("activation", "activation 'swish' is not one of",
         lambda d: d["nodes"][0]["activation"].update(name="swish"))
    edit("aggregation", "aggregation 'median' is not one of",
         lambda d: d["nodes"][1]["aggregation"].update(name="median"))
    edit("order", "1 is not evaluated before 0", lambda d: d["nodes"].reverse())
    edit("dangling", "7 is neither an input nor a node", lambda d: d["connections"][0].update({"from": 7}))
    edit("weight", "connection -1 -> 1 needs a finite number 'weight'",
         lambda d: d["connections"][0].pop("weight"))
    edit("nan", "node 1 needs a finite number 'bias'", lambda d: d["nodes"][0].update(bias=float("nan")))
    edit("into-input", "-2 is not an evaluated node", lambda d: d["connections"][0].update(to=-2))
    edit("twice", "node 0 appears twice", lambda d: d["nodes"].append(dict(d["nodes"][1])))
    return cases


@pytest.mark.parametrize("name, data, reason", _broken(), ids=[c[0] for c in _broken()])
def test_a_broken_file_is_refused_with_the_reason(tmp_path: Path, name: str, data: object,
                                                  reason: str) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(NetworkFileError, match=str(path)) as e:
        load_network(path)
    assert reason in str(e.value)
    with pytest.raises(AgentError, match="parameter 'eval'") as e2:
        make_agent("mcts", f"eval=neat:{path}")
    assert reason in str(e2.value)


def test_a_network_that_does_not_fit_the_game_is_refused(tmp_path: Path) -> None:
    small = write(tmp_path / "two.json", hand_written(2))
    with pytest.raises(ConfigError, match="the network has 2 inputs but the game has 55 features"):
        make_agent("mcts", f"eval=neat:{small}").plan(TINY.new_state(seed=1), iterations=10, seed=1)
    with pytest.raises(ConfigError, match="this game has no feature vector"):
        make_agent("mcts", f"eval=neat:{small}").plan(Game("nim").new_state(seed=1), iterations=10, seed=1)
    d = hand_written(N)
    d["metadata"]["game"] = "cards"
    other = write(tmp_path / "cards.json", d)
    with pytest.raises(NetworkFileError, match="made for 'cards', not 'heroes'"):
        make_agent("greedy-turn", f"eval=neat:{other}").plan(TINY.new_state(seed=1), iterations=10, seed=1)
    with pytest.raises(AgentError, match="heuristic or neat:FILE"):
        make_agent("mcts", "eval=deep:x.json")
    with pytest.raises(AgentError, match="cannot read the network file"):
        make_agent("mcts", f"eval=neat:{tmp_path / 'missing.json'}")
