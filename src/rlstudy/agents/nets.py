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


def linear_layers(network: nn.Module) -> list[nn.Linear]:
    """The Linear layers of an `mlp` (or any Sequential of Linear and ReLU), in order."""
    return [module for module in network.modules() if isinstance(module, nn.Linear)]


def relu_forward(layers: Sequence[nn.Linear], x: torch.Tensor, relu_last: bool = False) -> list[torch.Tensor]:
    """The input and every layer's output of Linear layers with ReLU between them (and after the
    last if `relu_last`), without autograd: what relu_backward needs. One fused product per layer."""
    outputs = [x]
    with torch.no_grad():
        for i, layer in enumerate(layers):
            x = torch.addmm(layer.bias, x, layer.weight.t())
            if relu_last or i < len(layers) - 1:
                x = x.relu_()
            outputs.append(x)
    return outputs


def relu_backward(layers: Sequence[nn.Linear], outputs: Sequence[torch.Tensor], grad: torch.Tensor,
                  relu_last: bool = False, parameters: bool = True, inputs: bool = False) -> torch.Tensor | None:
    """Backpropagates `grad` (d loss / d the last output of relu_forward) by hand: with `parameters`,
    each layer's weight and bias gradients are written into their .grad (what autograd's backward
    of the same layers computes, by the same products, without its graph's per-node cost); returns
    d loss / d input if `inputs`. A ReLU's derivative at 0 is 0, as autograd's."""
    with torch.no_grad():
        if relu_last:
            grad = torch.ops.aten.threshold_backward(grad, outputs[-1], 0.0)
        for i in range(len(layers) - 1, -1, -1):
            layer = layers[i]
            if parameters:
                for parameter in (layer.weight, layer.bias):
                    if parameter.grad is None:
                        parameter.grad = torch.empty_like(parameter)
                torch.mm(grad.t(), outputs[i], out=layer.weight.grad)
                torch.sum(grad, 0, out=layer.bias.grad)
            if i or inputs:
                grad = grad.mm(layer.weight)
            if i:
                grad = torch.ops.aten.threshold_backward(grad, outputs[i], 0.0)
    return grad if inputs else None
