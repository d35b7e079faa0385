"""The SDK's error tree: BotError for a misbehaving peer or wrong use, BotTerminatedError
under it when the other end is gone (connection lost, bot process exited)."""

from __future__ import annotations

import signal


class BotError(RuntimeError):
    """The server, the network or the bot did something wrong, or the SDK was used wrongly."""


class ServerError(BotError):
    """The server refused this client with an `error` message; `code` is its error code
    (e.g. auth_failed, rate_limited)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.message = message


class BotTerminatedError(BotError):
    """The other end is gone: the connection closed while games were running, or a bot
    process exited. `returncode` is the process's exit code when there is one."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        hint = exit_hint(returncode)
        if returncode is not None:
            message = f"{message} (exit code {returncode}{': ' + hint if hint else ''})"
        super().__init__(message)
        self.returncode = returncode


def exit_hint(returncode: int | None) -> str:
    """What an exit code usually means ("" when nothing useful is known)."""
    if returncode is None or returncode == 0:
        return ""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return {1: "uncaught error (see its stderr)", 2: "bad command line", 126: "not executable",
            127: "command not found", 137: "killed (SIGKILL, maybe out of memory)"}.get(returncode, "")
