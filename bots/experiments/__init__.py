"""In-process research experiments over the bundled agents (the research setting: agents
called directly, optionally seeing the whole state): `maag arena` (arena.py, cli_arena.py)
and `maag experiment hidden` (hidden.py, cli_experiment.py), and the studies declared in
studies/NAME.toml, `maag experiment NAME` and `maag experiment report NAME` (study.py), and
the search speed of maag's agents against OpenSpiel's on the same positions
(openspiel_speed.py, `python3 -m maag.bots.experiments.openspiel_speed`). The real game,
through bot processes and the referee, is `maag match` and `maag tournament`."""
