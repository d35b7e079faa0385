"""Networks for the tests: neat-python genomes made from the shipped configuration, and
hand-written network JSON in neat-python's export format."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import neat
from neat.export import export_network_json
from neat.innovation import InnovationTracker

CONFIG = Path(__file__).resolve().parents[2] / "lab" / "neat-heroes.cfg"
ACTIVATIONS = ["sigmoid", "tanh", "sin", "gauss", "relu", "elu", "lelu", "selu", "softplus", "identity",
               "clamped", "inv", "log", "exp", "abs", "hat", "square", "cube"]
AGGREGATIONS = ["sum", "product", "max", "min", "maxabs", "mean"]


def config(tmp: Path, *, every_function: bool = False) -> neat.Config:
    """The shipped configuration; with every_function, every activation and aggregation the
    C evaluator offers, mutated often, so random genomes use them all."""
    text = CONFIG.read_text()
    if every_function:
        lines = []
        for line in text.splitlines():
            key = line.split("=")[0].strip()
            if key == "activation_options":
                line = "activation_options = " + " ".join(ACTIVATIONS)
            elif key == "activation_mutate_rate":
                line = "activation_mutate_rate = 0.6"
            elif key == "aggregation_options":
                line = "aggregation_options = " + " ".join(AGGREGATIONS)
            elif key == "aggregation_mutate_rate":
                line = "aggregation_mutate_rate = 0.4"
            elif key in ("node_add_prob", "conn_add_prob"):
                line = f"{key} = 0.7"
            elif key == "response_mutate_rate":
                line = "response_mutate_rate = 0.5"
            elif key == "response_mutate_power":
                line = "response_mutate_power = 0.5"
            lines.append(line)
        text = "\n".join(lines) + "\n"
    path = tmp / "neat.cfg"
    path.write_text(text)
    cfg = neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                      neat.DefaultStagnation, str(path))
    cfg.genome_config.innovation_tracker = InnovationTracker()  # what a Population sets up
    return cfg


def random_genome(cfg: neat.Config, key: int, mutations: int, rng_seed: int) -> neat.DefaultGenome:
    random.seed(rng_seed)
    g = neat.DefaultGenome(key)
    g.configure_new(cfg.genome_config)
    for _ in range(mutations):
        g.mutate(cfg.genome_config)
    return g


def export(genome: neat.DefaultGenome, cfg: neat.Config, path: Path, game: str | None = "heroes") -> Path:
    net = neat.nn.FeedForwardNetwork.create(genome, cfg)
    export_network_json(net, filepath=str(path), metadata={"game": game} if game else None)
    return path


def hand_written(n_inputs: int = 2) -> dict[str, Any]:
    """inputs -1, -2 (and more, unused); hidden node 1 = tanh(0.5 + 1.0 * (2 x1 - x2));
    output 0 = sigmoid(-0.1 + 2.0 * (1.5 h + 0.3 x1))."""
    return {
        "format_version": "1.0", "network_type": "feedforward", "metadata": {},
        "topology": {"num_inputs": n_inputs, "num_outputs": 1,
                     "input_keys": [-(i + 1) for i in range(n_inputs)], "output_keys": [0]},
        "nodes": [
            {"id": 1, "type": "hidden", "activation": {"name": "tanh", "custom": False},
             "aggregation": {"name": "sum", "custom": False}, "bias": 0.5, "response": 1.0},
            {"id": 0, "type": "output", "activation": {"name": "sigmoid", "custom": False},
             "aggregation": {"name": "sum", "custom": False}, "bias": -0.1, "response": 2.0},
            *[{"id": -(i + 1), "type": "input", "activation": {"name": "identity", "custom": False},
               "aggregation": {"name": "none", "custom": False}, "bias": 0.0, "response": 1.0}
              for i in range(n_inputs)],
        ],
        "connections": [
            {"from": -1, "to": 1, "weight": 2.0, "enabled": True},
            {"from": -2, "to": 1, "weight": -1.0, "enabled": True},
            {"from": 1, "to": 0, "weight": 1.5, "enabled": True},
            {"from": -1, "to": 0, "weight": 0.3, "enabled": True},
        ],
    }


def constant(value: float, n_inputs: int) -> dict[str, Any]:
    """A network whose output is `value` (identity output, bias only, no connections)."""
    d = hand_written(n_inputs)
    d["nodes"] = [{"id": 0, "type": "output", "activation": {"name": "identity"},
                   "aggregation": {"name": "sum"}, "bias": value, "response": 1.0}]
    d["connections"] = []
    return d


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path
