"""`--web [HOST:]PORT`: where the web view listens (no aiohttp here: the command line parses
it before anything of the web view loads)."""

from __future__ import annotations

__all__ = ["parse_listen"]


def parse_listen(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` -> (host, port); a bare port listens on 127.0.0.1 only. ValueError if
    malformed."""
    host, sep, port = text.rpartition(":")
    try:
        p = int(port)
    except ValueError:
        raise ValueError(f"--web takes [HOST:]PORT, not {text!r}") from None
    if not 0 <= p <= 65535:
        raise ValueError(f"port {p} is outside 0..65535")
    return (host.strip("[]") if sep and host else "127.0.0.1"), p
