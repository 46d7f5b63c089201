"""Parameters kept in one flat array per optimiser: at MPO's sizes a torch optimiser's step (even
fused) cost more in its per-call work than its arithmetic, three times per update; on one flat
array the gradient's clipping, the optimiser's step and the target networks' copy are each one or
a few whole-array passes. Adam's step is core/flat_networks.FlatAdam's compiled pass, run on a
FlatParameters or a part of one (a learning rate per part); SGD with momentum is here, in NumPy.
The arithmetic is torch's Adam and SGD's (tests/unit/agents/test_mpo_gradients.py holds the steps
against them)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch


class FlatParameters:
    """Moves every tensor of `parameters` into one flat float32 array (`values`), each tensor becoming
    a view of its slice, with a flat gradient (`grads`) viewed by each tensor's .grad the same way:
    whatever writes the tensors or their gradients (the hand-written passes, load_state_dict) writes these."""

    def __init__(self, parameters):
        parameters = list(parameters)
        total = sum(parameter.numel() for parameter in parameters)
        values, grads = torch.empty(total), torch.zeros(total)
        offset = 0
        with torch.no_grad():
            for parameter in parameters:
                size = parameter.numel()
                values[offset:offset + size].copy_(parameter.reshape(-1))
                parameter.data = values[offset:offset + size].view_as(parameter)
                parameter.grad = grads[offset:offset + size].view_as(parameter)
                offset += size
        self.values, self.grads = values.numpy(), grads.numpy()

    def part(self, start: int, stop: int) -> SimpleNamespace:
        """Elements start..stop-1 as their own `values` and `grads` (views): what an optimiser with its
        own learning rate steps."""
        return SimpleNamespace(values=self.values[start:stop], grads=self.grads[start:stop])

    def clip_gradient(self, max_norm: float) -> None:
        """Scales the gradient to norm max_norm when it is longer (torch's clip_grad_norm_, 1e-6 in its denominator)."""
        scale = max_norm / (math.sqrt(float(np.dot(self.grads, self.grads))) + 1e-6)
        if scale < 1.0:
            self.grads *= np.float32(scale)


class SGD:
    """torch.optim.SGD's step with momentum (no dampening, no Nesterov) on a FlatParameters or a part of one."""

    def __init__(self, flat, lr: float, momentum: float):
        self.flat, self.momentum, self.lr = flat, np.float32(momentum), np.float32(lr)
        self.buffer: np.ndarray | None = None

    def step(self) -> None:
        if self.buffer is None:
            self.buffer = self.flat.grads.copy()
        else:
            self.buffer *= self.momentum
            self.buffer += self.flat.grads
        self.flat.values -= self.lr * self.buffer
