"""maag.rl: the games for reinforcement learning, on the engine alone.

Modules:
  encoding        the fixed-size numeric forms of a configured game: `ActionTable` (every
                  action code numbered, masks over them; from the game folder's spaces.py)
                  and `ObservationEncoder` (one seat's observation as a float32 vector)
  pettingzoo_env  every registered game as a PettingZoo AEC environment: `env(game, **options)`,
                  `raw_env(...)` (needs the `rl` extra: pettingzoo and gymnasium)

    >>> from maag.rl.pettingzoo_env import env
    >>> e = env(game="heroes", map="a-tiny")
    >>> e.reset(seed=1)
"""
