"""Two protocol Connections over a fake wire (h11's tests/helpers.py, for maag)."""

from __future__ import annotations

from typing import Any

from maag.protocol import (
    NEED_DATA,
    Connection,
    ConnectionClosed,
    Event,
    Greeting,
    Hello,
    Message,
    Role,
    Welcome,
)


def drain(conn: Connection) -> list[Event]:
    """Every event `conn` has buffered, up to NEED_DATA or ConnectionClosed (included)."""
    out: list[Event] = []
    while True:
        ev = conn.next_event()
        if ev is NEED_DATA:
            return out
        assert not isinstance(ev, type(NEED_DATA))
        out.append(ev)
        if isinstance(ev, ConnectionClosed):
            return out


class Wire:
    """A client and a server Connection joined back to back; `chunk` splits every delivery
    into pieces of that many bytes (None: whole)."""

    def __init__(self, encoding: str, chunk: int | None = None, **kwargs: Any) -> None:
        self.client = Connection(Role.CLIENT, **kwargs)
        self.server = Connection(Role.SERVER, **kwargs)
        self.chunk = chunk
        self.bytes_sent = 0
        self.encoding = encoding

    def _deliver(self, conn: Connection, data: bytes) -> None:
        self.bytes_sent += len(data)
        if data == b"":
            conn.receive_data(b"")
        elif self.chunk is None:
            conn.receive_data(data)
        else:
            for i in range(0, len(data), self.chunk):
                conn.receive_data(data[i:i + self.chunk])

    def c2s(self, *events: Event) -> list[Event]:
        """Send events from the client; return what the server decodes."""
        for ev in events:
            self._deliver(self.server, self.client.send(ev))
        return drain(self.server)

    def s2c(self, *events: Event) -> list[Event]:
        for ev in events:
            self._deliver(self.client, self.server.send(ev))
        return drain(self.client)

    def open(self, hello: Hello | None = None) -> None:
        """Greeting, hello and welcome."""
        hello = hello or Hello(name="bot", token="secret", games=["heroes"])
        assert self.c2s(Greeting(encoding=self.encoding), hello) == [Greeting(encoding=self.encoding), hello]
        welcome = Welcome(bot="bot", server="maag-test", max_frame=self.server.max_frame)
        assert self.s2c(welcome) == [welcome]


def same(sent: list[Message], got: list[Event]) -> bool:
    return list(sent) == list(got)
