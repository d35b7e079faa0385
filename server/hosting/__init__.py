"""A hosted bot's life, from its upload to its games (docs/hosting.md): the bots the host runs
itself, in the sandbox (maag.server.sandbox). compete/ and web/ use it through `api.py` only.

- `api.py`: the room's one door: the names compete/, web/, cli/ and bench/ use.
- `options.py`: what a host grants (HostOptions: limits, pondering, cores), a hosted bot (HostedBot),
  the environment and PATH of every hosted process.
- `store.py`: the package store: each package kept once per machine under the SHA-256 of its archive,
  checked and unpacked there once (maag.server.sandbox.archive), for every way in.
- `builder.py`: a package's build, once, in the sandbox; its result unpacked safely.
- `host.py`: `Host`: a fresh sandboxed process per game attached to a referee, cores pinned per game,
  the fair clocks; `hosted_bot`, a bot given on the command line or stored, as a hosted bot.
- `clocks.py`: each seat's CPU time per turn and off turn, and the machine's overload (CPU stall, the
  referee's lag) while a game ran.
- `relay.py`: a hosted bot relayed to a TCP address (the bot kit connects bots that way).
- `validator.py`: a built package validated on one referee: the kit's situations, then smoke games
  against random and against itself.
- `submissions.py`: uploads: a package checked and stored as a version of a bot (pending), built and
  validated (active or rejected with the reason and the report); NAME@VERSION resolved to its package.
"""
