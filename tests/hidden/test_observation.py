"""No agent reachable from `maag bot run`, `maag match` or the referee can obtain hidden
cards: the wire observation and the Observation object carry none, every registered agent
plans the same from two states that differ only in hidden cards, and the cheating twins
cannot be built from what a bot process holds."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest
from maag.bots import AGENTS, AgentError, make_agent, parse_agent
from maag.bots.cheating import CheatingAgent
from maag.engine import Observation
from maag.protocol import plain
from maag.server.referee.clock import TimeControl
from maag.server.referee.session import GameSession

from .helpers import GAME, hidden_twin, midgame

# Iteration budgets in each kernel's unit (budget-free agents ignore them), and settings
# that make the searches look into the opponent's reply, where hidden cards matter.
ITERATIONS = {"greedy-turn": 500, "oep": 5, "ucb": 500, "openspiel": 30}
REPLY = {"rollout_turns": 2}

# The agents of every game (the conquest-* agents play conquest only; their tests are beside it).
GENERIC = [n for n, spec in AGENTS.items() if not spec.games]


def _settings(name: str) -> dict[str, Any]:
    params = {p.name for p in AGENTS[name].params}
    out: dict[str, Any] = {k: v for k, v in REPLY.items() if k in params or name == "pimc"}
    if name == "oep":
        out["fitness_rollouts"] = 3
    if name == "openspiel":
        out["evaluator"] = "heuristic"  # OpenSpiel's random rollouts of a whole game take seconds
    return out


def _hidden_keys(obs_json: dict[str, Any], seat: int) -> None:
    """What an observation for `seat` must not carry."""
    opp = str(2 - seat)
    assert obs_json["observer"] == seat + 1
    assert "deck_seed" not in obs_json
    assert obs_json["hands"][opp] == []
    assert set(obs_json["hand_sizes"]) == {"1", "2"} and set(obs_json["deck_sizes"]) == {"1", "2"}
    text = json.dumps(obs_json)
    assert "seed" not in text and "rng" not in text


def test_observation_is_its_own_type() -> None:
    state = midgame(1)
    obs = Observation.of(state)
    with pytest.raises(TypeError):
        Observation()
    with pytest.raises(AttributeError):
        obs._st = state  # type: ignore[misc]
    assert obs.seat == state.current_player
    _hidden_keys(obs.to_json(), obs.seat)
    # even the wrapped engine state is an observation: nothing hidden inside it either
    _hidden_keys(obs.as_state().to_json(), obs.seat)
    with pytest.raises(ValueError, match="no 'observer'"):
        Observation.from_json(GAME, state.to_json())
    with pytest.raises(ValueError, match="seat"):
        Observation.of(state.observation(0), 1)
    assert Observation.from_json(GAME, obs.to_json()) == obs
    assert Observation.of(state.observation(1)) == Observation.of(state, 1)
    assert obs.legal_codes() == state.legal_codes()
    assert obs.evaluate(0) == state.evaluate(0)


def test_hidden_cards_do_not_reach_the_observation() -> None:
    for seed in (1, 2, 3):
        state = midgame(seed)
        twin = hidden_twin(state)
        seat = state.current_player
        assert state.to_json()["hands"] != twin.to_json()["hands"]  # the hidden parts differ
        assert Observation.of(state) == Observation.of(twin)
        assert Observation.of(state).to_json() == Observation.of(twin).to_json()
        _hidden_keys(Observation.of(state).to_json(), seat)


def test_the_wire_observation_carries_nothing_hidden() -> None:
    """The referee's your_turn observations over a real game with random draws: no hidden
    field, the unseen multiset is the opponent's hand and deck together, and it is exactly
    what Observation.of gives (so a bot's Observation.from_json of the wire is the same)."""
    s = GameSession("g", GAME, ["a", "b"], tc=TimeControl.parse("inf"), seed=5, clock=lambda: 0.0)
    outs = s.start(0.0)
    rng = random.Random(5)
    seen = 0
    while not s.finished and seen < 40:
        yt = [o for o in outs if o.msg.TYPE == "your_turn"]
        assert len(yt) == 1
        seat, msg = yt[0].seat, yt[0].msg
        wire = plain(msg.observation)  # type: ignore[attr-defined]
        _hidden_keys(wire, seat)
        truth = s.state.to_json()
        opp = str(2 - seat)
        unseen = dict(truth["decks"][opp])
        for card in truth["hands"][opp]:
            unseen[card] = unseen.get(card, 0) + 1
        assert wire["decks"][opp] == unseen
        obs = Observation.from_json(GAME, wire)
        assert obs == Observation.of(s.state, seat)
        assert obs == Observation.of(hidden_twin(s.state), seat)
        seen += 1
        st = s.state.clone()
        plan = []
        while True:
            code = rng.choice([c for c in st.legal_codes() if c != 0] or [0])
            st.apply(code)
            plan.append(GAME.action(code).to_dict())
            if code == 0 or st.is_terminal:
                break
        outs = s.submit(seat, plan, 0.0)
    assert seen >= 10


@pytest.mark.parametrize("name", GENERIC)
def test_no_registered_agent_sees_hidden_cards(name: str) -> None:
    """Every agent `maag bot run` and `maag match` can name plans the same from two full
    states that differ only in the opponent's hidden cards, and from the observation. The
    searches that look into the opponent's reply do depend on those cards when they are
    shown them (the cheating twin), so the check has teeth."""
    it = ITERATIONS.get(name, 1000)
    sensitive = False
    for seed in (1, 2, 3, 4):
        state = midgame(seed)
        twin = hidden_twin(state)
        plans = [[a.code for a in make_agent(name, **_settings(name)).plan(v, iterations=it, seed=17)]
                 for v in (state, twin, Observation.of(state))]
        assert plans[0] == plans[1] == plans[2]
        cheats = [[a.code for a in CheatingAgent(make_agent(name, **_settings(name))).plan(v, iterations=it,
                                                                                            seed=17)]
                  for v in (state, twin)]
        sensitive = sensitive or cheats[0] != cheats[1]
    if name in ("mcts", "ne-mcts", "bb-mcts", "collapse-mcts", "oep", "pimc", "ismcts"):
        assert sensitive, "the hidden cards never mattered: the check proves nothing"


def test_cheating_twins_need_the_true_state() -> None:
    """A bot process holds only wire observations: the state it can build from one is an
    observation, and a cheating twin refuses it. Cheaters are not registered agents."""
    assert not any("cheat" in name for name in AGENTS)
    with pytest.raises(AgentError, match="unknown agent"):
        parse_agent("cheat:mcts")
    state = midgame(2)
    wire = Observation.of(state).to_json()
    from_wire = GAME.state_from_json(wire)
    twin = CheatingAgent(make_agent("mcts"))
    with pytest.raises(ValueError, match="full state"):
        twin.plan(from_wire, iterations=50, seed=1)
    # given the truth, the twin does see it: its plan depends on the hidden cards
    assert twin.plan(state, iterations=50, seed=1)


def test_bot_and_server_paths_never_load_the_cheating_twins() -> None:
    """Importing everything `maag bot run`, `maag match` and `maag serve` run (the command
    line with all its subcommands, the referee, the server, the match runner, the minibot,
    the client SDK, the agents) does not load maag.bots.cheating."""
    mods = ["maag.server.cli", "maag.server.net.server", "maag.server.referee.session",
            "maag.server.compete.match", "maag.server.net.minibot", "maag.server.cli.match",
            "maag.server.cli.serve", "maag.clients", "maag.bots", "maag.bots.hidden"]
    try:
        import maag.bots.cli_run  # noqa: F401  (maag bot run, when installed)

        mods.append("maag.bots.cli_run")
    except ImportError:
        pass
    code = ("import importlib, sys\n"
            f"for m in {mods!r}: importlib.import_module(m)\n"
            "print('maag.bots.cheating' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
