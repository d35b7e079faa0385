"""The fleet: referee processes sharing one database, as one room. The composition root
(maag.server.net.server) knows it by its interface only, and hands it its collaborators, never
the whole server; a referee alone on its database runs the same server code with a fleet of one.

- interface.py: `Fleet`, what the referee server uses of the fleet (links, its loops, the
  hand-over at the stop, a bot admitted, the failed-login delay, the ladder's hosted bots
  handed in), `FleetParts`, what it hands the fleet to build one, and `HostedGames`, what a
  member uses of a ladder's hosted bots.
- fleets.py: `build_fleet` (by `ServerConfig.fleet`): `DatabaseFleet` (the modules below,
  composed) or `SoloFleet` (a referee with its database to itself: no action log, takeover,
  links nor fleet ladder; limits counted in its process).
- store.py: the fleet's tables over any backend (written once, like storage/'s stores, but
  used only by the fleet): the running games' action log in batches, the takeover of a
  lapsed referee's games, the fleet's counts of game starts and failed logins, where each
  referee takes seat links.
- assignments.py: a fleet ladder's tables: who is free on which referee, each referee's free
  hosted slots, the games its one scheduler pairs (fenced by the scheduler's epoch), each
  bot's games in progress.
- takeover.py: `Takeover`: the action log written every 100 ms, a lapsed referee's games
  taken over and rebuilt, this referee's games handed over at its stop, its own stop once
  its lease is revoked.
- limits.py: `FleetLimits`: games per bot per minute, the failed-login delay and revoked
  tokens, over every referee on the database.
- links.py: `Links`: a seat carried to the referee hosting its game, both ends (the link
  listener and the relay).
- member.py: `Member`: this referee's part in a fleet's ladder: its presence published, its
  assignments hosted or linked, their hosted seats started (interface.py's `HostedGames`: the
  ladder's hosted bots).
- scheduler.py: `FleetScheduler`: one ladder scheduled over every referee on its database
  (`maag ladder --fleet`), by the process holding the ladder's lock.
"""
