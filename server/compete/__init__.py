"""Competitions: a match between two bots (match.py), the embedded referee with bot
processes that tournaments use (arena.py), tournament formats (formats.py), the resumable
tournament runner (runner.py), the continuous ladder (ladder.py) and ratings (ratings.py)."""
