"""Evaluation networks: a NEAT feed-forward network read from neat-python's network JSON
(`neat.export.export_network_json`, format_version "1.0", network_type "feedforward") into
the C evaluator (mg_eval_net.h), which the search kernels call instead of the game's
heuristic when a search is given one (`search(..., {"eval_net": net})`; agents take
`eval=neat:FILE`).

    >>> from maag.engine.evalnet import load_network
    >>> net = load_network("winner.json")        # NetworkFileError with the reason if broken
    >>> net.activate(state.features(0))           # the network's raw output on a state

What is read from the file:
  topology.num_inputs, input_keys   the inputs, in the order of the game's feature vector
                                    (State.features); their number must be the game's
  topology.num_outputs, output_keys exactly one output
  nodes                             the evaluated nodes ("hidden", "output") in evaluation
                                    order (neat-python's node_evals order), each with its id,
                                    activation.name, aggregation.name, bias and response;
                                    "input" nodes are skipped
  connections                       from, to, weight (enabled ones; those into a node are
                                    summed in file order); `from` is an input key or a node
                                    listed before `to`
  metadata.game (optional)          the game the network was evolved for; checked
An output node absent from the nodes outputs 0. The C side gives the evaluation of a state
that is not terminal as the output clamped to [-1, 1] times half the game's value scale
(mg_eval_net.h)."""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ._lowlevel import check, ffi, lib
from .game import Game

__all__ = ["ACTIVATIONS", "AGGREGATIONS", "Network", "NetworkFileError", "load_network"]

ACTIVATIONS: dict[str, int] = {
    "sigmoid": lib.MG_ACT_SIGMOID, "tanh": lib.MG_ACT_TANH, "sin": lib.MG_ACT_SIN,
    "gauss": lib.MG_ACT_GAUSS, "relu": lib.MG_ACT_RELU, "elu": lib.MG_ACT_ELU,
    "lelu": lib.MG_ACT_LELU, "selu": lib.MG_ACT_SELU, "softplus": lib.MG_ACT_SOFTPLUS,
    "identity": lib.MG_ACT_IDENTITY, "clamped": lib.MG_ACT_CLAMPED, "inv": lib.MG_ACT_INV,
    "log": lib.MG_ACT_LOG, "exp": lib.MG_ACT_EXP, "abs": lib.MG_ACT_ABS, "hat": lib.MG_ACT_HAT,
    "square": lib.MG_ACT_SQUARE, "cube": lib.MG_ACT_CUBE,
}
AGGREGATIONS: dict[str, int] = {
    "sum": lib.MG_AGG_SUM, "product": lib.MG_AGG_PRODUCT, "max": lib.MG_AGG_MAX,
    "min": lib.MG_AGG_MIN, "maxabs": lib.MG_AGG_MAXABS, "mean": lib.MG_AGG_MEAN,
}


class NetworkFileError(ValueError):
    """A network file that cannot be used; the message names the file and the reason."""


class Network:
    """A network in the C evaluator's form. `cdata` is the `mg_net *` a search reads (kept
    alive by this object); `game` is metadata.game when the file names one."""

    __slots__ = ("cdata", "game", "source")

    def __init__(self, cdata: Any, game: str | None, source: str) -> None:
        self.cdata = cdata
        self.game = game
        self.source = source

    @property
    def n_inputs(self) -> int:
        return int(self.cdata.n_inputs)

    def activate(self, inputs: list[float]) -> float:
        """The output on one input vector (C, as the searches compute it; no clamp)."""
        if len(inputs) != self.n_inputs:
            raise ValueError(f"the network has {self.n_inputs} inputs, not {len(inputs)}")
        return float(lib.mg_net_activate(self.cdata, ffi.new("double[]", [float(x) for x in inputs])))

    def check_game(self, game: Game) -> None:
        """ConfigError unless the network fits `game` (its feature count, metadata.game)."""
        if self.game is not None and self.game != game.name:
            raise NetworkFileError(f"{self.source}: the network was made for {self.game!r}, "
                                   f"not {game.name!r}")
        err = ffi.new("char[]", lib.MG_ERR_LEN)
        check(game.vt, lib.mg_net_check(self.cdata, game.vt, err), ffi.string(err).decode())

    def __repr__(self) -> str:
        return f"<Network {self.source}: {self.n_inputs} inputs, {int(self.cdata.n_nodes)} nodes>"


def _fail(source: str, reason: str) -> NetworkFileError:
    return NetworkFileError(f"{source}: {reason}")


def _number(source: str, obj: dict[str, Any], key: str, what: str) -> float:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _fail(source, f"{what} needs a finite number {key!r}, not {v!r}")
    return float(v)


def _key(source: str, v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(source, f"{what} must be an integer node id, not {v!r}")
    return v


def network_from_json(data: Any, source: str = "<network>") -> Network:
    """A Network from neat-python's network JSON already parsed; NetworkFileError naming
    the first problem."""
    if not isinstance(data, dict):
        raise _fail(source, "the file holds no JSON object")
    if data.get("network_type") != "feedforward":
        raise _fail(source, f"network_type must be 'feedforward', not {data.get('network_type')!r}")
    if data.get("format_version") != "1.0":
        raise _fail(source, f"format_version {data.get('format_version')!r} is not neat-python's '1.0'")
    topo = data.get("topology")
    if not isinstance(topo, dict):
        raise _fail(source, "no 'topology' object")
    inputs, outputs = topo.get("input_keys"), topo.get("output_keys")
    if not isinstance(inputs, list) or not inputs:
        raise _fail(source, "topology.input_keys must be a non-empty list")
    if not isinstance(outputs, list) or len(outputs) != 1:
        raise _fail(source, f"the network needs exactly one output, not {outputs!r}")
    if topo.get("num_inputs", len(inputs)) != len(inputs):
        raise _fail(source, "topology.num_inputs does not match input_keys")
    if len(inputs) > lib.MG_MAX_FEATURES:
        raise _fail(source, f"{len(inputs)} inputs; at most {lib.MG_MAX_FEATURES} are possible")
    index: dict[int, int] = {}
    for i, k in enumerate(inputs):
        index[_key(source, k, "an input key")] = i
    if len(index) != len(inputs):
        raise _fail(source, "topology.input_keys repeats a key")
    output = _key(source, outputs[0], "the output key")
    nodes = data.get("nodes")
    conns = data.get("connections")
    if not isinstance(nodes, list) or not isinstance(conns, list):
        raise _fail(source, "'nodes' and 'connections' must be lists")
    evaluated: list[dict[str, Any]] = []
    for node in nodes:
        if not isinstance(node, dict):
            raise _fail(source, f"a node must be an object, not {node!r}")
        if node.get("type") == "input":
            continue
        nid = _key(source, node.get("id"), "a node id")
        if nid in index:
            raise _fail(source, f"node {nid} appears twice (or is also an input)")
        index[nid] = len(inputs) + len(evaluated)
        evaluated.append(node)
    into: dict[int, list[tuple[int, float]]] = {}
    for c in conns:
        if not isinstance(c, dict):
            raise _fail(source, f"a connection must be an object, not {c!r}")
        if c.get("enabled", True) is False:
            continue
        src = _key(source, c.get("from"), "a connection's 'from'")
        dst = _key(source, c.get("to"), "a connection's 'to'")
        if dst not in index or index[dst] < len(inputs):
            raise _fail(source, f"connection {src} -> {dst}: {dst} is not an evaluated node")
        if src not in index:
            raise _fail(source, f"connection {src} -> {dst}: {src} is neither an input nor a node")
        if index[src] >= index[dst]:
            raise _fail(source, f"connection {src} -> {dst}: {src} is not evaluated before {dst} "
                                "(the nodes must be listed in evaluation order)")
        w = _number(source, c, "weight", f"connection {src} -> {dst}")
        into.setdefault(dst, []).append((index[src], w))
    if output not in index:  # not evaluated: it outputs 0
        index[output] = len(inputs) + len(evaluated)
        evaluated.append({"id": output, "activation": {"name": "identity"}, "aggregation": {"name": "sum"},
                          "bias": 0.0, "response": 1.0})
    n_links = sum(len(v) for v in into.values())
    if len(evaluated) > lib.MG_NET_MAX_NODES or n_links > lib.MG_NET_MAX_LINKS:
        raise _fail(source, f"{len(evaluated)} nodes and {n_links} connections; at most "
                            f"{lib.MG_NET_MAX_NODES} and {lib.MG_NET_MAX_LINKS} are possible")
    net = ffi.new("mg_net *")
    net.n_inputs, net.n_nodes, net.n_links = len(inputs), len(evaluated), n_links
    net.output = index[output] - len(inputs)
    k = 0
    for j, node in enumerate(evaluated):
        nid = node["id"]
        act, agg = node.get("activation"), node.get("aggregation")
        act_name = act.get("name") if isinstance(act, dict) else act
        agg_name = agg.get("name") if isinstance(agg, dict) else agg
        if act_name not in ACTIVATIONS:
            raise _fail(source, f"node {nid}: activation {act_name!r} is not one of "
                                f"{', '.join(ACTIVATIONS)}")
        if agg_name not in AGGREGATIONS:
            raise _fail(source, f"node {nid}: aggregation {agg_name!r} is not one of "
                                f"{', '.join(AGGREGATIONS)}")
        n = net.node[j]
        n.act, n.agg = ACTIVATIONS[act_name], AGGREGATIONS[agg_name]
        n.bias = _number(source, node, "bias", f"node {nid}")
        n.response = _number(source, node, "response", f"node {nid}")
        n.first = k
        links = into.get(nid, [])
        n.count = len(links)
        for src, w in links:
            net.link_src[k], net.link_w[k] = src, w
            k += 1
    err = ffi.new("char[]", lib.MG_ERR_LEN)
    if lib.mg_net_check(net, ffi.NULL, err) != lib.MG_OK:  # the C side's own checks
        raise _fail(source, ffi.string(err).decode())
    meta = data.get("metadata")
    game = meta.get("game") if isinstance(meta, dict) else None
    return Network(net, game if isinstance(game, str) else None, source)


# The networks read lately (a network is ~100 KB; an evolution reads thousands of files).
_CACHE: OrderedDict[tuple[str, int, int], Network] = OrderedDict()
_CACHE_SIZE = 16


def load_network(path: str | os.PathLike[str]) -> Network:
    """The network in a neat-python network JSON file (read once while the file is
    unchanged); NetworkFileError naming the file and the reason when it cannot be used."""
    p = Path(path)
    try:
        st = p.stat()
        key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        text = p.read_text()
    except OSError as e:
        raise NetworkFileError(f"{path}: cannot read the network file ({e.strerror or e})") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise NetworkFileError(f"{path}: not JSON ({e})") from None
    net = network_from_json(data, str(path))
    _CACHE[key] = net
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return net
