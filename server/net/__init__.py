"""The network: the referee server (server.py, `RefereeServer`) in rooms, one job each: the
transport (transport.py: one asyncio.Protocol per connection), the fast path of plain acts
and turns (plain.py: from the frame's bytes to the replies' bytes), the lobby (lobby.py: who is
free, who plays whom), the games' life cycle (games.py), the forfeits (forfeits.py: a bot
cut off, a seat away or gone before its game), the storage keeper (keeper.py:
lease, outages, spill file), a fleet on one database (takeover.py: the action log, a failed
referee's games taken over, ours handed over; fleetlimits.py: the abuse limits counted over
the fleet; links.py: a seat carried to the referee hosting its game; member.py: this referee's
part in a fleet's ladder), the watchers (watchers.py), its data (model.py) and its event loop (loop.py); and
the referee's own minimal test bot (minibot.py)."""
