"""A connection's round trip as the kernel measured it (TCP_INFO): what the clock forgives of
each exchange (up to the time control's lag) as transport, not thinking."""

from __future__ import annotations

import socket
import struct

__all__ = ["RTT_READ_S", "min_rtt_ms"]

RTT_READ_S = 1.0
"""How often (at most) a connection's round trip is read again: the kernel's minimum is over a
window of minutes (net.ipv4.tcp_min_rtt_wlen, 300 s by default), so reading it each turn of
the bot (a system call, a few microseconds of a turn message's CPU) told nothing new."""

_TCP_INFO_RTT = struct.Struct("=I")
# struct tcp_info (linux/tcp.h): 8 one-byte fields, 24 u32 fields (tcpi_rtt the 16th), 4 u64
# fields, 4 u32 fields then tcpi_min_rtt (Linux 4.6 and later). The clock forgives the
# minimum round trip, not the smoothed one: Linux delays its ACK of a prompt until the bot
# answers (up to 40 ms), so the smoothed round trip of a bot that thinks grows with its
# thinking, and forgiving it forgave the thinking (tests/e2e/test_clock_transport.py).
_MIN_RTT_OFFSET = 8 + 24 * 4 + 4 * 8 + 3 * 4
_RTT_OFFSET = 8 + 15 * 4  # (a kernel before 4.6: the smoothed round trip, as before)


def min_rtt_ms(sock: socket.socket | None) -> float:
    """The minimum round trip of TCP socket `sock` in milliseconds (0 if unknown: no socket,
    no TCP_INFO, or no round trip measured yet)."""
    if sock is None or not hasattr(socket, "TCP_INFO"):
        return 0.0
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _MIN_RTT_OFFSET + 4)
        at = _MIN_RTT_OFFSET if len(raw) >= _MIN_RTT_OFFSET + 4 else _RTT_OFFSET
        us = _TCP_INFO_RTT.unpack_from(raw, at)[0]
    except (OSError, struct.error):
        return 0.0
    return 0.0 if us == 0xFFFFFFFF else float(us) / 1000.0  # (0xFFFFFFFF: the kernel's "none")
