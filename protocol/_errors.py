"""Every error code of the maag wire protocol, and the exception tree that carries them.

A code is sent in `error` messages (`code`) and in `result` messages (`error`). Codes may be
added in later versions of the protocol: a client should treat an unknown code as fatal if
it arrives in an `error` without `game_id`, and as a failed request otherwise.
"""

from __future__ import annotations

from enum import Enum


class ErrorCode(str, Enum):
    """The wire error codes. `FATAL` (below) says which ones end the connection."""

    # -- framing and encoding: the connection is closed after the error is sent ----------
    BAD_GREETING = "bad_greeting"            # first line is not `MAAG <version> <encoding>`
    UNSUPPORTED_VERSION = "unsupported_version"  # greeting or message names another version
    BAD_FRAME = "bad_frame"                  # a frame that cannot be delimited (zero length)
    FRAME_TOO_LARGE = "frame_too_large"      # a frame (or line) over the receiver's max_frame
    TRUNCATED_FRAME = "truncated_frame"      # the stream ended in the middle of a frame
    BAD_ENCODING = "bad_encoding"            # not valid msgpack / JSON / UTF-8, or not a map
    # -- schema: the connection is closed after the error is sent -------------------------
    UNKNOWN_TYPE = "unknown_type"            # `type` is missing or names no message
    MISSING_FIELD = "missing_field"          # a required field is absent
    BAD_FIELD = "bad_field"                  # a field has the wrong type or range, or is unknown
    UNEXPECTED_MESSAGE = "unexpected_message"  # a valid message the connection's state forbids
    # -- session: the connection is closed after the error is sent -----------------------
    AUTH_FAILED = "auth_failed"              # hello: unknown or revoked token
    ALREADY_CONNECTED = "already_connected"  # hello: this token has a live connection already
    UNSUPPORTED_GAME = "unsupported_game"    # hello: none of `games` is served here
    RATE_LIMITED = "rate_limited"            # more messages per second than the server allows
    SHUTTING_DOWN = "shutting_down"          # the server is stopping
    UNAVAILABLE = "unavailable"              # the server cannot take the connection now (its
                                             # database is away): try again later
    INTERNAL_ERROR = "internal_error"        # a bug in the server; please report it
    # -- game requests: answered, the connection stays open ------------------------------
    UNKNOWN_GAME = "unknown_game"            # game_id is not a game of this connection (or is over)
    WRONG_SEAT = "wrong_seat"                # `seat` given does not match this connection's seat
    NOT_YOUR_TURN = "not_your_turn"          # the game is waiting for the other seat
    BAD_ACTION = "bad_action"                # an action map this game cannot read
    ILLEGAL_ACTION = "illegal_action"        # a readable action the rules forbid now
    TIMEOUT = "timeout"                      # the seat's time ran out; its turn was ended

    def __str__(self) -> str:
        return self.value


# Codes after which the server closes the connection (all of them, when sent before
# `welcome`). The others answer one request; the connection and its games go on.
FATAL: frozenset[ErrorCode] = frozenset(
    c for c in ErrorCode
    if c not in {ErrorCode.UNKNOWN_GAME, ErrorCode.WRONG_SEAT, ErrorCode.NOT_YOUR_TURN,
                 ErrorCode.BAD_ACTION, ErrorCode.ILLEGAL_ACTION, ErrorCode.TIMEOUT}
)


class ProtocolError(Exception):
    """A violation of the protocol. Do not raise this class itself: `LocalProtocolError`
    means this side tried to do something illegal, `RemoteProtocolError` that the peer did.

    `code` is the ErrorCode to report to the peer; `message` a sentence for people;
    `field` names the offending message field when there is one.
    """

    def __init__(self, code: ErrorCode, message: str, *, field: str | None = None) -> None:
        if type(self) is ProtocolError:
            raise TypeError("raise LocalProtocolError or RemoteProtocolError")
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.field = field  # the offending field's name, for the schema codes


class LocalProtocolError(ProtocolError):
    """This side tried to build or send something the protocol forbids (a bug in the caller)."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol forbids; answer with an `error` carrying `code`."""
