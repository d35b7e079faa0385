"""`maag bench`: the engine (engine.py), the search kernels (search.py) and the server
under load from bot processes (server.py)."""
