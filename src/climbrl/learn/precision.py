"""The arithmetic of a run (``TrainConfig.precision``): fp32, or bfloat16 where it is cheap.

Why: a self-play actor spends most of its core in the network's forward pass
(``benchmarks/actor_profile.py``), and the CPUs of this project's machines multiply bfloat16
matrices faster than fp32 ones (AMX on Intel, ``avx512_bf16`` on AMD; the gain grows with the rows
per call: ``benchmarks/precision.py``). Two places can use it:

* **acting** (``bf16-actors`` and ``bf16``): the behaviour policy scores its moves with a
  bfloat16 copy of the weights, made once per epoch from the fp32 weights (:func:`acting_net`);
  its scores come back as float32, so sampling, the recorded log-probabilities and everything
  after them stay fp32;
* **updating** (``bf16``): the learner's forward and backward passes run under
  ``torch.autocast(bfloat16)`` (:func:`update_context`): matrix products in bfloat16, the
  weights, their gradients and the optimizer's state in fp32 (autocast's "master weights").

The networks return float32 scores and values whatever the arithmetic inside
(:mod:`climbrl.learn.network`), so the losses are summed in fp32.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import torch

ACTING = {"fp32": "fp32", "bf16-actors": "bf16", "bf16": "bf16"}
"""The acting arithmetic of each ``precision`` setting."""


def acting_precision(precision: str) -> str:
    """``fp32`` or ``bf16``: how a run of ``precision`` scores its self-play moves."""
    return ACTING[precision]


def acting_net(net: torch.nn.Module, acting: str) -> torch.nn.Module:
    """The network that scores moves at ``acting`` arithmetic: ``net`` itself for fp32, else a
    bfloat16 copy in eval mode (``net`` is left as it is: the learner keeps updating it)."""
    if acting == "fp32":
        return net
    if acting != "bf16":
        raise ValueError(f"acting arithmetic must be fp32 or bf16, got {acting!r}")
    return copy.deepcopy(net).to(torch.bfloat16).eval()


def as_input(x: torch.Tensor, net: torch.nn.Module) -> torch.Tensor:
    """``x`` in the dtype of ``net``'s weights (a bfloat16 copy reads bfloat16 inputs)."""
    dtype = next(net.parameters()).dtype
    return x if x.dtype == dtype else x.to(dtype)


def update_context(precision: str, device: Any) -> contextlib.AbstractContextManager:
    """The context of a learner's update: bfloat16 autocast on ``device`` for ``bf16``, else none."""
    if precision != "bf16":
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)
