"""The referee, free of transport: one `GameSession` per game (session.py) owns the state,
the RNG and the seats; clock.py is the time control as data; policy.py what lateness,
errors and disconnection cost; replay.py re-simulates stored games exactly."""
