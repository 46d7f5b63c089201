"""Parameters kept in one flat array per optimiser, and the optimisers' steps on it in NumPy: at
MPO's sizes a torch optimiser's step (even fused) cost more in its per-call work than its
arithmetic, three times per update; on one flat array the gradient's clipping, Adam's step and
the target networks' copy are each a few whole-array passes. The arithmetic is torch's Adam and
SGD's (tests/unit/agents/test_mpo_gradients.py holds the steps against them)."""

from __future__ import annotations

import math

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

    def clip_gradient(self, max_norm: float) -> None:
        """Scales the gradient to norm max_norm when it is longer (torch's clip_grad_norm_, 1e-6 in its denominator)."""
        scale = max_norm / (math.sqrt(float(np.dot(self.grads, self.grads))) + 1e-6)
        if scale < 1.0:
            self.grads *= np.float32(scale)


class Adam:
    """torch.optim.Adam's step (no weight decay, no amsgrad) on a FlatParameters; `lr` a number or one per element."""

    def __init__(self, flat: FlatParameters, lr, eps: float, betas: tuple[float, float] = (0.9, 0.999)):
        self.flat, self.eps, (self.beta1, self.beta2) = flat, eps, betas
        self.lr = np.asarray(lr, dtype=np.float32)
        self.exp_avg, self.exp_avg_sq = np.zeros_like(flat.values), np.zeros_like(flat.values)
        self.scratch = np.empty_like(flat.values)
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        grads, scratch = self.flat.grads, self.scratch
        np.subtract(grads, self.exp_avg, out=scratch)  # exp_avg moves (1 - beta1) of the way to the gradient
        scratch *= np.float32(1.0 - self.beta1)
        self.exp_avg += scratch
        np.multiply(grads, grads, out=scratch)
        scratch *= np.float32(1.0 - self.beta2)
        self.exp_avg_sq *= np.float32(self.beta2)
        self.exp_avg_sq += scratch
        correction1, correction2 = 1.0 - self.beta1 ** self.steps, 1.0 - self.beta2 ** self.steps
        np.sqrt(self.exp_avg_sq, out=scratch)
        scratch /= np.float32(math.sqrt(correction2))
        scratch += np.float32(self.eps)
        np.divide(self.exp_avg, scratch, out=scratch)
        scratch *= self.lr / np.float32(correction1)
        self.flat.values -= scratch


class SGD:
    """torch.optim.SGD's step with momentum (no dampening, no Nesterov) on a FlatParameters."""

    def __init__(self, flat: FlatParameters, lr, momentum: float):
        self.flat, self.momentum = flat, np.float32(momentum)
        self.lr = np.asarray(lr, dtype=np.float32)
        self.buffer: np.ndarray | None = None

    def step(self) -> None:
        if self.buffer is None:
            self.buffer = self.flat.grads.copy()
        else:
            self.buffer *= self.momentum
            self.buffer += self.flat.grads
        self.flat.values -= self.lr * self.buffer
