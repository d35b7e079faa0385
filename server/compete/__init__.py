"""Competitions: a match between two bots (match.py), the embedded referee with bot
processes that tournaments use (arena.py), tournament formats (formats.py), the resumable
tournament runner (runner.py), the continuous ladder (ladder.py), its scheduling over a
fleet of referee processes (fleet.py) and who plays whom on it (pairing.py), the strike
policy (strikes.py), bots the host runs in the sandbox (hosting.py) and participants'
submissions, built and validated before they play (submissions.py). Ratings are maag.stats'."""
