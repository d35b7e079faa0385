"""The environment a bot process gets: nothing of the host's but the path, the home folder,
the locale and the documented MAAG_* variables, and what the host passes on purpose
(`--pass-env NAME`). A database URL or a password in the host's environment never reaches
a bot this way."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["bot_environment", "KEPT"]

KEPT = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ")
"""Host variables every unsandboxed bot keeps (a sandboxed one gets its own PATH and HOME)."""


def bot_environment(maag: Mapping[str, str], pass_env: Iterable[str] = (),
                    host: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a bot process: KEPT and `pass_env` from `host` (default
    os.environ), then `maag` (the MAAG_* variables of docs/server.md)."""
    host = os.environ if host is None else host
    env = {k: host[k] for k in KEPT if k in host}
    for name in pass_env:
        if name in host:
            env[name] = host[name]
    env.update(maag)
    return env
