"""Hostile bot: says hello, then closes its connection and lives on (sleeping), so that its
process neither plays nor exits: the referee must not wait for it for ever."""

import json
import os
import socket
import struct
import time

import msgpack


def connect() -> socket.socket:
    addr = os.environ["MAAG_CONNECT"]
    if addr.startswith("fd:"):  # a hosted bot's inherited socket
        return socket.socket(fileno=int(addr[3:]))
    host, _, port = addr.rpartition(":")
    return socket.create_connection((host or "127.0.0.1", int(port)))


body = msgpack.packb({"type": "hello", "v": 1, "name": "hangup_after_hello",
                      "token": os.environ["MAAG_TOKEN"], "games": [os.environ.get("MAAG_GAME", "nim")]})
sock = connect()
sock.sendall(b"MAAG 1 msgpack\n" + struct.pack(">I", len(body)) + body)
sock.shutdown(socket.SHUT_RDWR)  # (every copy of the descriptor: the referee sees the end now)
sock.close()
print("PROBE " + json.dumps({"probe": "hangup"}), flush=True)
time.sleep(3600)
