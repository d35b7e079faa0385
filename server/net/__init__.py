"""The network: the referee server (server.py, `RefereeServer`) in rooms, one job each: the
transport (transport.py: one asyncio.Protocol per connection; every act, turn and
resignation it reads becomes a `Play`; rtt.py: its round trip as the kernel measured
it), the plays handed to their games (acts.py: `Acts.act`,
the one way an action takes), the lobby (lobby.py: who is
free, who plays whom; seating.py: who is seated in which game and seat, each connection's free
slots), the games' life cycle (games.py), what
the games' sessions say written to their seats (telling.py: `Teller`), the forfeits (forfeits.py: a bot
cut off, a seat away or gone before its game), the storage keeper (keeper.py:
lease, outages, spill file), the watchers (watchers.py), its data (model.py) and its event
loop (loop.py); the fleet is its own room (maag.server.fleet); and
the referee's own minimal test bot (minibot.py)."""
