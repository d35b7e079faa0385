"""Storage of bots, games, replays and tournaments: one interface with SQLite (default, a
file) and PostgreSQL (hosted competitions) behind it (base.py, postgres.py), and the
tournaments' schedule tables (tournaments.py)."""
