"""maag.server (see ../shared/DESIGN.md): the referee and everything around it, in rooms.

  referee/   one game without transport: `GameSession`, clocks, policies, exact replay,
             the spectator's view
  net/       the network server: `RefereeServer` and its rooms (transport, lobby, games,
             storage keeper, watchers)
  fleet/     referees sharing one database: the action log and takeovers, seat links, a
             fleet ladder's members and scheduler, the fleet-wide limits, their tables
  storage/   bots, games, replays, tournaments and submissions in SQLite or PostgreSQL
  compete/   matches, tournaments, the ladder: competition formats
  hosting/   a hosted bot's life: the package store, the build, the validation, games in the sandbox
  sandbox/   how a stranger's bot is run: packages, limits, cgroups, the jail
  web/       the browser view: spectators, people's seats, uploads
  kit/       the bot kit (`maag bot check`)
  bench/     `maag bench ...`
  cli/       the `maag` command line, assembled from entry points
  printable  `printable(text)`: a participant's text (logs, notes, details) made safe to show
             a person, its control and bidi characters as visible escapes
  __main__   `python -m maag.server`, the same as `maag`"""
