"""Hostile bot: on each turn, sends a frame header announcing 4 GiB (2^32 - 1 bytes) and a
few bytes of it, then waits; the referee must cut it off (frame_too_large) before reading more."""

import json
import os
import socket
import struct
import time

import msgpack

GAME = os.environ.get("MAAG_GAME", "nim")


NAME = "frame_4g"


def attack(sock: socket.socket, turn: dict) -> None:
    sock.sendall(struct.pack(">I", 2**32 - 1) + b"\x83" + b"x" * 1000)


def connect() -> tuple[socket.socket, bool]:
    """The referee connection of $MAAG_CONNECT, and whether another can be made (not for an
    inherited socket, fd:N, a hosted bot's only one)."""
    addr = os.environ["MAAG_CONNECT"]
    if addr.startswith("fd:"):
        return socket.socket(fileno=int(addr[3:])), False
    host, _, port = addr.rpartition(":")
    return socket.create_connection((host or "127.0.0.1", int(port))), True


def frame(msg: dict) -> bytes:
    body = msgpack.packb(msg)
    return struct.pack(">I", len(body)) + body


def hello() -> bytes:
    msg = {"type": "hello", "v": 1, "name": NAME, "token": os.environ["MAAG_TOKEN"], "games": [GAME],
           "want_legal": True}
    return b"MAAG 1 msgpack\n" + frame(msg)


def messages(sock: socket.socket):
    """The referee's messages, until it closes the connection."""
    buf = b""
    while True:
        try:
            data = sock.recv(1 << 16)
        except OSError:
            return
        if not data:
            return
        buf += data
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
            n = struct.unpack(">I", buf[:4])[0]
            yield msgpack.unpackb(buf[4:4 + n], raw=False)
            buf = buf[4 + n:]


def main() -> None:
    while True:
        sock, again = connect()
        sock.sendall(hello())
        for m in messages(sock):
            if m.get("type") == "error":
                print("PROBE " + json.dumps({"probe": NAME, "error": m.get("code")}), flush=True)
            if m.get("type") == "your_turn":
                print("PROBE " + json.dumps({"probe": NAME, "game": m.get("game_id")}), flush=True)
                try:
                    attack(sock, m)
                except OSError:
                    pass  # the referee closed the connection meanwhile
        sock.close()  # (the referee cut it off)
        if not again:
            time.sleep(3600)  # a hosted process lives on without its connection
        time.sleep(0.2)  # a bot process connects again: each game it is given, it does it again


main()
