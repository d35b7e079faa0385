"""The two-write exchange of `maag bench server --floor` (server/bench/bare.py `--events`):
over real sockets, each frame a connection sends is answered on it and reported to the other
connection of its pair by an action event, in a write of its own; and a bench run against it
with the Python bench bots. The figures themselves are not asserted (benchmarks measure;
docs/benchmarks.md has them)."""

from __future__ import annotations

import socket
import struct
from pathlib import Path
from typing import Any

import msgpack
import pytest
from maag.server.bench import processes
from maag.server.bench import server as bench


def _send(sock: socket.socket, msg: dict[str, Any]) -> None:
    body = msgpack.packb(msg)
    sock.sendall(struct.pack(">I", len(body)) + body)


def _read(sock: socket.socket) -> dict[str, Any]:
    def exactly(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            assert chunk, "the exchange closed the connection"
            out += chunk
        return out

    n = struct.unpack(">I", exactly(4))[0]
    return dict(msgpack.unpackb(exactly(n), raw=False))


def _login(port: int) -> tuple[socket.socket, str]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"MAAG 1 msgpack\n")
    _send(sock, {"type": "hello", "v": 1, "name": "t", "token": "x", "games": ["heroes"]})
    assert _read(sock)["type"] == "welcome"
    gid = _read(sock)["game_id"]  # game_start
    assert _read(sock)["type"] == "your_turn"
    return sock, gid


@pytest.mark.parametrize("events", [False, True])
def test_each_frame_is_answered_and_with_events_reported_to_the_pair(tmp_path: Path, events: bool) -> None:
    proc, port = processes.start_bare(tmp_path, events)
    try:
        a, ga = _login(port)
        b, gb = _login(port)
        act = {"type": "act", "v": 1, "game_id": ga, "action": {"type": "end_turn"}}
        for _ in range(3):
            _send(a, act)
            turn = _read(a)
            assert turn["type"] == "your_turn" and turn["game_id"] == ga and turn["legal"]
        if events:  # b is a's pair: an event on b for each of a's frames
            for _ in range(3):
                ev = _read(b)
                assert ev["type"] == "event" and ev["game_id"] == gb and ev["kind"] == "action"
                assert isinstance(ev["action"], dict) and ev["action"]["type"]
        _send(b, {**act, "game_id": gb})
        assert _read(b)["type"] == "your_turn"
        if events:
            ev = _read(a)
            assert ev["type"] == "event" and ev["game_id"] == ga
        # Nothing else is waiting on either connection.
        for s in (a, b):
            s.settimeout(0.2)
            with pytest.raises(TimeoutError):
                s.recv(1)
            s.close()
    finally:
        proc.kill()
        proc.wait()


def test_a_bench_run_reports_the_floor() -> None:
    out = bench.run((2,), runs=1, warmup=0.3, seconds=1.0, mode="act", floor=True)["2"]
    assert out["errors"] == 0
    assert out["floor_cpu_us_per_message"] > 0 and out["bare_cpu_us_per_message"] > 0
    ratio = out["floor_cpu_us_per_message"] / out["bare_cpu_us_per_message"]
    assert out["floor_ratio"] == pytest.approx(ratio, abs=0.01)
