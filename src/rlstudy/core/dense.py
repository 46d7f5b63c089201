"""ReLU networks' forward and backward passes written by hand in NumPy, on arrays that share a torch
module's memory: the deep learners' updates (agents' DQN and DDPG, the offline learners) run them where
PyTorch's per-call dispatch costs more than the small products themselves (docs/speed.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn


class Dense:
    """A Linear layer's weight, bias and their gradients as NumPy arrays that share the tensors'
    memory: the hand-written passes below run on them, and the optimiser, the target updates and
    the saved state dict see the same numbers through the tensors. At the agents' sizes NumPy's
    products (OpenBLAS) and element-wise passes cost less per call than PyTorch's, whose dispatch
    is a sizeable share of a small update. The gradients are allocated here and only overwritten
    (an optimiser's zero_grad(set_to_none=True) would detach them from these arrays: not called)."""

    def __init__(self, layer: nn.Linear):
        for parameter in (layer.weight, layer.bias):
            if parameter.grad is None:
                parameter.grad = torch.zeros_like(parameter)
        self.weight, self.bias = layer.weight.detach().numpy(), layer.bias.detach().numpy()
        self.weight_grad, self.bias_grad = layer.weight.grad.numpy(), layer.bias.grad.numpy()


def dense_layers(network: nn.Module) -> list[Dense]:
    """The Linear layers of an `mlp` (or any Sequential of Linear and ReLU), in order."""
    return [Dense(module) for module in network.modules() if isinstance(module, nn.Linear)]


def relu_forward(layers: Sequence[Dense], x: np.ndarray, relu_last: bool = False) -> list[np.ndarray]:
    """The input and every layer's output of Linear layers with ReLU between them (and after the
    last if `relu_last`): what relu_backward needs."""
    outputs = [x]
    for i, layer in enumerate(layers):
        x = x @ layer.weight.T
        x += layer.bias
        if relu_last or i < len(layers) - 1:
            np.maximum(x, 0.0, out=x)
        outputs.append(x)
    return outputs


def relu_backward(layers: Sequence[Dense], outputs: Sequence[np.ndarray], grad: np.ndarray,
                  relu_last: bool = False, parameters: bool = True, inputs: bool = False) -> np.ndarray | None:
    """Backpropagates `grad` (d loss / d the last output of relu_forward) by hand: with `parameters`,
    each layer's weight and bias gradients are written into its tensors' .grad (the products autograd's
    backward of the same layers runs, without its graph's per-node cost); returns d loss / d input if
    `inputs`. A ReLU's derivative at 0 is 0, as autograd's."""
    if relu_last:
        grad = grad * (outputs[-1] > 0)
    for i in range(len(layers) - 1, -1, -1):
        layer = layers[i]
        if parameters:
            np.matmul(grad.T, outputs[i], out=layer.weight_grad)
            np.sum(grad, axis=0, out=layer.bias_grad)
        if i or inputs:
            grad = grad @ layer.weight
        if i:
            grad *= outputs[i] > 0
    return grad if inputs else None
