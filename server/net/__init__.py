"""The network: the asyncio TCP server that connects bots to referee sessions (server.py)
and the referee's own minimal test bot (minibot.py)."""
