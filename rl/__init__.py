"""maag.rl: the games for reinforcement learning, on the engine alone.

Modules:
  encoding        the fixed-size numeric forms of a configured game: `ActionTable` (every
                  action code numbered, masks over them; from the game folder's spaces.py)
                  and `ObservationEncoder` (one seat's observation as a float32 vector)
  pettingzoo_env  every registered game as a PettingZoo AEC environment: `env(game, **options)`,
                  `raw_env(...)` (needs the `rl` extra: pettingzoo and gymnasium)
  openspiel_game  every registered game as an OpenSpiel game, registered as maag_<name> on
                  import (`pyspiel.load_game("maag_heroes", {"map": "a-tiny"})`; the `rl`
                  extra: open-spiel); OpenSpiel's MCTS and ISMCTS play through it as the
                  agent `openspiel` of maag.bots

    >>> from maag.rl.pettingzoo_env import env
    >>> e = env(game="heroes", map="a-tiny")
    >>> e.reset(seed=1)
"""
