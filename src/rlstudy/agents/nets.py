"""Small networks whose initial weights come from a run's own generator, not torch's global one."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn


def linear(in_features: int, out_features: int, generator: torch.Generator, bias: bool = True) -> nn.Linear:
    """nn.Linear with PyTorch's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from `generator`."""
    layer = nn.Linear(in_features, out_features, bias=bias)
    bound = 1.0 / math.sqrt(in_features)
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.uniform_(-bound, bound, generator=generator)
    return layer


def mlp(sizes: Sequence[int], generator: torch.Generator) -> nn.Sequential:
    """Linear layers of the given sizes with ReLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(nn.ReLU())
        layers.append(linear(n_in, n_out, generator))
    return nn.Sequential(*layers)
