"""The referee, free of transport: one `GameSession` per game (session.py) owns the state,
the RNG and the seats, and drives the game over its base classes: codes.py (action codes and
the log), messages.py (what each seat is told), outcome.py (the end of a game, its verdicts
and replay), deadlines.py (clocks, deadlines and the policies' sanctions). clock.py is the
time control as data; policy.py what lateness, errors and disconnection cost; replay.py
re-simulates stored games exactly; resume.py rebuilds a game taken over from its logged
actions (`ResumedSession`); schema.py is the protocol's JSON Schema with the registered
games' shapes (`maag protocol schema`); spectator.py is what a watcher of a live game may
see (what both seats' observations agree on, never a hidden hand)."""
