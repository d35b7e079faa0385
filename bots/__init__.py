"""maag.bots: the bundled agents (see ../shared/DESIGN.md). `make_agent(name, ...)` gives
an agent whose `plan(state, budget_ms=..., iterations=..., seed=...)` returns the actions
for the rest of the turn; `AGENTS` lists them with their parameters. The experiments over
them are maag.lab's.

Modules:
  agents      the registry of agents by name (`register`, `make_agent`, `parse_agent`),
              their parameters as `Option`s, each a C search kernel
  hidden      `pimc` and `ismcts`: searches over determinizations of the observation
  conquest    conquest's own agents (`conquest-*`, the thesis's and TripleA's)
  openspiel   `openspiel:mcts`, `openspiel:ismcts`: OpenSpiel's searches through maag.rl's door
  best        `best`: each game's strongest agent and setting by the results' tables
  cheating    cheating and peeking twins, which see the true state: for experiments only
  runner      an agent as a bot process (a maag.clients `Bot`)
  cli_run     `maag bot run AGENT`
  cli_search  `maag bot search AGENT --positions FILE`: an agent's searches on given positions"""

from .agents import AGENTS, DEFAULT_BUDGET_MS, Agent, AgentError, AgentSpec, make_agent, parse_agent
from .best import BestAgent  # registers best (its agents are looked up when it plans)
from .conquest import ConquestAgent  # registers the conquest-* agents
from .hidden import IsmctsAgent, PimcAgent  # registers pimc and ismcts
from .openspiel import OpenSpielAgent  # registers openspiel (OpenSpiel itself is imported on first use)

__all__ = ["AGENTS", "DEFAULT_BUDGET_MS", "Agent", "AgentError", "AgentSpec", "BestAgent", "ConquestAgent",
           "IsmctsAgent", "OpenSpielAgent", "PimcAgent", "make_agent", "parse_agent"]
