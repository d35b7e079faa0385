"""Shared by the misbehaving test bots: argument parsing and a raw protocol connection."""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from typing import Any

from maag.protocol import NEED_DATA, Connection, ConnectionClosed, Greeting, Hello, Message, Role


def arguments(doc: str | None, argv: Sequence[str] | None = None,
              extra: Sequence[tuple[str, dict[str, Any]]] = ()) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=doc)
    p.add_argument("address", help="HOST:PORT of the referee")
    p.add_argument("token")
    p.add_argument("--name", default=None)
    p.add_argument("--encoding", default="json", choices=["json", "msgpack"])
    for flag, kw in extra:
        p.add_argument(flag, **kw)
    return p.parse_args(argv)


class RawBot:
    """A blocking protocol client: greet, hello, then read messages one by one."""

    def __init__(self, address: str, token: str, name: str, encoding: str = "json",
                 greet: bool = True) -> None:
        host, _, port = address.rpartition(":")
        self.sock = socket.create_connection((host or "127.0.0.1", int(port)))
        self.conn = Connection(Role.CLIENT)
        if greet:
            self.sock.sendall(self.conn.send(Greeting(encoding=encoding)))
            hello = Hello(name=name, token=token, games=["heroes"], want_legal=True)
            self.sock.sendall(self.conn.send(hello))

    def send(self, msg: Message) -> None:
        self.sock.sendall(self.conn.send(msg))

    def recv(self) -> Message | None:
        """The next message, or None when the server has closed the connection."""
        while True:
            ev = self.conn.next_event()
            if isinstance(ev, ConnectionClosed):
                return None
            if ev is not NEED_DATA:
                assert isinstance(ev, Message)
                return ev
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            self.conn.receive_data(data)


def log(name: str, text: str) -> None:
    print(f"{name}: {text}", file=sys.stderr, flush=True)
