"""What a host grants its hosted bots (HostOptions), a hosted bot itself (HostedBot), and the
environment every hosted process gets (sandbox_env, sandbox_path)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.server.sandbox.environment import bot_environment
from maag.server.sandbox.limits import DEFAULT_LIMITS, Limits
from maag.server.sandbox.package import BotPackage, PackageError

__all__ = ["HostOptions", "HostedBot", "SandboxUnavailable", "PONDER", "STORED_PREFIX", "safe_name",
           "sandbox_env", "sandbox_path", "check_threads", "default_max_threads"]

PONDER = ("allow", "freeze")
STORED_PREFIX = "package:sha256:"
"""A bot given as a stored package (a submitted version): `package:sha256:HEX`."""


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here (no bubblewrap, no namespaces): `maag sandbox check` says why."""


def default_max_threads() -> int:
    """The cores a package may ask for (`threads`) unless the host says otherwise: all of the
    machine's but one (kept for the referee), at least one."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass(frozen=True, slots=True)
class HostOptions:
    limits: Limits = DEFAULT_LIMITS
    ponder: str = "allow"
    pass_env: tuple[str, ...] = ()
    sandbox_commands: bool = False
    """Run command-line bots in the sandbox too (`--sandbox`); packages always are."""
    pin_cores: bool = True
    max_threads: int = field(default_factory=default_max_threads)
    """The most `threads` a package may ask for (`--max-threads`); one asking for more is refused."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data, for a Dask worker."""
        return {"limits": self.limits.to_dict(), "ponder": self.ponder, "pass_env": list(self.pass_env),
                "sandbox_commands": self.sandbox_commands, "pin_cores": self.pin_cores,
                "max_threads": self.max_threads}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HostOptions:
        return cls(limits=Limits(**d["limits"]) if "limits" in d else DEFAULT_LIMITS,
                   ponder=d.get("ponder", "allow"), pass_env=tuple(d.get("pass_env", ())),
                   sandbox_commands=bool(d.get("sandbox_commands", False)),
                   pin_cores=bool(d.get("pin_cores", True)),
                   max_threads=int(d.get("max_threads") or default_max_threads()))


def check_threads(pkg: BotPackage, options: HostOptions, where: str = "") -> None:
    """PackageError when `pkg` asks for more cores than the host grants."""
    if pkg.threads > options.max_threads:
        raise PackageError(f"{where or pkg.name}: the package asks for threads = {pkg.threads}, but this "
                           f"host grants at most {options.max_threads} (--max-threads)")


@dataclass(slots=True)
class HostedBot:
    """A participant the host runs in the sandbox: the folder bound at /bot and the argv."""

    name: str
    folder: Path
    argv: list[str]
    threads: int = 1
    package: BotPackage | None = None


def safe_name(name: str) -> str:
    """`name` as a file name (bot logs): letters, digits, '-', '_' and '.', the rest '_'."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def sandbox_env(bot: HostedBot, token: str, game: str, fd: int, options: HostOptions) -> dict[str, str]:
    """A hosted bot's whole environment: the sandbox's own variables, the documented MAAG_*
    ones, and what the host passes on purpose (--pass-env), never over the former."""
    env = {"PATH": sandbox_path(), "HOME": "/scratch", "TMPDIR": "/scratch", "LANG": "C.UTF-8",
           "PYTHONPATH": "/opt/maag/sdk", "PYTHONDONTWRITEBYTECODE": "1",
           "MAAG_CONNECT": f"fd:{fd}", "MAAG_TOKEN": token, "MAAG_BOT": bot.name,
           "MAAG_CONCURRENCY": "1", "MAAG_GAME": game, "MAAG_THREADS": str(bot.threads)}
    passed = bot_environment({}, options.pass_env,
                             host={k: v for k, v in os.environ.items() if k in options.pass_env})
    return {**passed, **env}


def sandbox_path() -> str:
    """The sandbox's PATH: the bin folder of the Python that runs maag first (a virtualenv's,
    which has maag's dependencies, msgpack among them), then its base installation's, then
    the system's. A list, not a set: the order must not depend on the hash seed."""
    bins: list[str] = []
    for prefix in (sys.prefix, sys.base_prefix):
        b = str(Path(prefix) / "bin")
        if not prefix.startswith("/usr") and b not in bins:
            bins.append(b)
    return ":".join([*bins, "/usr/local/bin", "/usr/bin", "/bin"])
