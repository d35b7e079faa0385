"""The fleet: referee processes sharing one database, as one room. Each module gets its
collaborators from the composition root (maag.server.net.server), never the whole server.

- store.py: the fleet's tables over any backend (written once, like storage/'s stores, but
  used only by the fleet): the running games' action log in batches, the takeover of a
  lapsed referee's games, the fleet's counts of game starts and failed logins, where each
  referee takes seat links.
- assignments.py: a fleet ladder's tables: who is free on which referee, the games its one
  scheduler pairs (fenced by the scheduler's epoch), each bot's games in progress.
- takeover.py: `Takeover`: the action log written every 100 ms, a lapsed referee's games
  taken over and rebuilt, this referee's games handed over at its stop, its own stop once
  its lease is revoked.
- limits.py: `FleetLimits`: games per bot per minute, the failed-login delay and revoked
  tokens, over every referee on the database.
- links.py: `Links`: a seat carried to the referee hosting its game, both ends (the link
  listener and the relay).
- member.py: `Member`: this referee's part in a fleet's ladder: its presence published, its
  assignments hosted or linked.
- scheduler.py: `FleetScheduler`: one ladder scheduled over every referee on its database
  (`maag ladder --fleet`), by the process holding the ladder's lock.
"""
