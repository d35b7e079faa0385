"""maag.lab: the research bench. Experiments over the bundled agents (maag.bots) in the
research setting: agents called in-process, no referee and no bot processes (but for the
twins' bot process, twin_bot.py), optionally seeing the whole state; games stored as they
finish so that a run resumes. The real game, through bot processes and the referee, is
`maag match` and `maag tournament` (maag.server).

- arena.py: in-process games between agents, spread over a process pool; `maag arena`'s
  round robin, and the game loop every experiment here plays.
- cli_arena.py: the `maag arena` command.
- study.py: studies, experiments declared in studies/NAME.toml (`maag experiment NAME`,
  `maag experiment report NAME`): reading and checking a study file, playing it, the
  markdown tables and plots.
- studies/: the shipped study files.
- hidden.py: the hidden-information experiment (`maag experiment hidden`): honest agents,
  given their seat's observation, against cheating and peeking twins (maag.bots.cheating).
- twin_bot.py: a cheating or peeking twin as a bot process for `maag match` (`maag
  experiment twin-bot`): it rebuilds the true state from the match's seed and the actions
  it has seen, checked against every observation (experiments only); also the honest
  `infer:AGENT` of inference.py.
- inference.py: an honest agent whose one determinization keeps what the opponent's unspent
  mana says of its hand (the card game; experiments only).
- agreement.py: the agreement experiment (`maag experiment agreement`): how often an honest
  agent picks the action a player who sees the hidden cards would pick.
- cards.py: the card-game thesis's tables (`maag experiment cards`).
- conquest.py: the conquest thesis's tables (`maag experiment conquest`).
- cli_experiment.py: the `maag experiment` command and its subcommands.
- datafile.py: the experiments' data files, one JSON line per finished game.
- evolve.py: NEAT's evolution of a heroes evaluation network (`maag neat evolve|speed`;
  neat-heroes.cfg is its neat-python configuration; the network is read by
  maag.engine.evalnet).
- openspiel_speed.py: the search speed of maag's agents against OpenSpiel's on the same
  positions (`python3 -m maag.lab.openspiel_speed`)."""
