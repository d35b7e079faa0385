"""`Packed`: a field value its sender already holds in msgpack form.

The referee's observations come out of the game's C as msgpack (the game interface's
`write_msgpack`), and each legal action's map is packed once per game; a `your_turn` carries
them as `Packed` values. The msgpack framing copies their bytes into the frame (msgpack is
compositional: a map's bytes are its header, then its keys' and values' bytes in order);
everything else that needs the plain value (the JSON framing, the checks the test suite
turns on, `Message.to_wire`, logs) reads `value`, decoded once on first use."""

from __future__ import annotations

from typing import Any

import msgpack

_UNSET: Any = object()


class Packed:
    """The msgpack bytes of one plain value (packb with use_bin_type: what the framing would
    make of the value itself). Immutable."""

    __slots__ = ("data", "_value")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._value = _UNSET

    @property
    def value(self) -> Any:
        """The plain value (maps, lists, str, int, float, bool, None)."""
        if self._value is _UNSET:
            self._value = msgpack.unpackb(self.data, raw=False, strict_map_key=False)
        return self._value

    def __eq__(self, other: object) -> bool:
        """Equal to the same bytes, and to the plain value they hold (a message built with
        Packed fields equals the one decoded from its wire form, whose lists are tuples)."""
        if isinstance(other, Packed):
            return other.data == self.data
        v = self.value
        if isinstance(other, tuple) and isinstance(v, list):
            return tuple(v) == other
        return bool(v == other)

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"Packed({self.value!r})"


def header(n: int, small: int, b16: int) -> bytes:
    """A msgpack map (small 0x80, b16 0xDE) or array (0x90, 0xDC) header of n entries."""
    if n < 16:
        return bytes((small | n,))
    if n < 1 << 16:
        return bytes((b16,)) + n.to_bytes(2, "big")
    return bytes((b16 + 1,)) + n.to_bytes(4, "big")


def plain(v: Any) -> Any:
    """`v`, or its plain value if it is Packed (for readers of a built message's fields)."""
    return v.value if type(v) is Packed else v
