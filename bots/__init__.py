"""maag.bots: the bundled agents (see ../shared/DESIGN.md). `make_agent(name, ...)` gives
an agent whose `plan(state, budget_ms=..., iterations=..., seed=...)` returns the actions
for the rest of the turn; `AGENTS` lists them with their parameters."""

from .agents import AGENTS, DEFAULT_BUDGET_MS, Agent, AgentError, AgentSpec, make_agent, parse_agent
from .conquest import ConquestAgent  # registers the conquest-* agents
from .hidden import IsmctsAgent, PimcAgent  # registers pimc and ismcts
from .openspiel import OpenSpielAgent  # registers openspiel (OpenSpiel itself is imported on first use)

__all__ = ["AGENTS", "DEFAULT_BUDGET_MS", "Agent", "AgentError", "AgentSpec", "ConquestAgent", "IsmctsAgent",
           "OpenSpielAgent", "PimcAgent", "make_agent", "parse_agent"]
