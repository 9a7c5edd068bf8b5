"""Where an imported problem sums: each reduction its forward runs, with the number of terms that
go into one of its outputs, recorded on the meta device (shapes only, no memory).

The judge's atol grows with log2 of a `reduction` dim because a sum of n rounded terms drifts
from the float64 truth by about log2(n) roundings (pairwise and blocked sums, as kernels and torch
compute them). A shipped operator names that dim by hand; an imported one is read here, op by
op, as the forward dispatches to aten:
- a matmul or a convolution (the ops torch's FlopCounterMode counts): its flops per output
  element, halved (one multiply and one add per term): K for a GEMM, in_channels x the window for
  a convolution (per group), the keys for attention;
- a sum, a mean, a variance, a loss, an average pool: the elements of its input per element of
  its output (the dims the output lacks);
- a softmax, a cumulative sum, a norm: the length of the dims it reduces over (its argument);
- max, min, argmax and max pooling round nothing, and are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import flop_registry

from kernelgen.kernelbench.runtime import seeded

# Ops whose output holds the reduction of their input: the input's elements per output element.
_SHRINKING = {
    "sum",
    "mean",
    "nansum",
    "nanmean",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "norm",
    "linalg_vector_norm",
    "logsumexp",
    "prod",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "kl_div",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "soft_margin_loss",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool3d",
}
# Ops that keep their input's shape and reduce along one dim (their second argument).
_ALONG = {"_softmax", "_log_softmax", "softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"}
_POOLS = {"avg_pool1d", "avg_pool2d", "avg_pool3d"}
_NORMS = {
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_functional",
    "native_group_norm",
    "native_layer_norm",
}


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def _arg(args: tuple, kwargs: Mapping[str, Any], i: int, name: str, default: Any = None) -> Any:
    return args[i] if len(args) > i else kwargs.get(name, default)


def length(func: Any, args: tuple, kwargs: Mapping[str, Any], out: Any) -> int | None:
    """The terms one output element of this aten op sums (1 where its reduced dims are 1); None
    for an op that sums nothing."""
    name = func.overloadpacket.__name__
    outs = _tensors(out)
    ins = _tensors(args)
    if not outs or not ins or outs[0].numel() == 0:
        return None
    counted = flop_registry.get(func.overloadpacket)
    if counted is not None:
        flops = counted(*args, **kwargs, out_val=out)
        return max(1, round(flops / (2 * outs[0].numel())))
    x = ins[0]
    if name in ("mv", "addmv"):
        return int(_tensors(args)[-2 if name == "addmv" else 0].shape[-1])
    if name in ("dot", "vdot"):
        return int(x.numel())
    if name in ("nll_loss_forward", "nll_loss2d_forward"):
        # (input, target, weight, reduction, ignore_index): one picked term per target, summed
        # unless the reduction is none (0).
        return int(args[1].numel()) if _arg(args, kwargs, 3, "reduction", 1) else None
    if name in _SHRINKING:
        return max(1, x.numel() // max(1, outs[0].numel()))
    if name in _ALONG:
        dim = _arg(args, kwargs, 1, "dim", -1)
        return int(x.shape[dim]) if x.dim() else 1
    if name in _POOLS:
        kernel = _arg(args, kwargs, 1, "kernel_size", [1])
        return math.prod(kernel) if isinstance(kernel, (list, tuple)) else int(kernel)
    if name == "native_layer_norm":
        return math.prod(_arg(args, kwargs, 1, "normalized_shape", [1]))
    if name == "native_group_norm":
        channels, hxw, groups = args[4], args[5], args[6]
        return max(1, int(channels) // int(groups) * int(hxw))
    if name in _NORMS:  # a batch norm: over all but the channels, with batch statistics only
        # (input, weight, bias, running_mean, running_var, training, ...); the running
        # statistics left out (no_stats): (input, weight, bias, training, ...).
        training = bool(args[3] if len(args) == 6 else _arg(args, kwargs, 5, "training", True))
        return max(1, x.numel() // x.shape[1]) if training and x.dim() > 1 else 1
    return None


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.sites: list[tuple[str, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        n = length(func, args, kwargs, out)
        if n is not None:
            self.sites.append((func.overloadpacket.__name__, n))
        return out


@dataclass
class MetaRun:
    """The problem run once on the meta device: its inputs, parameters and buffers, and each
    reduction its forward ran, in order (the aten op, the terms per output element)."""

    inputs: list[Any]
    state: dict[str, torch.Tensor]
    outputs: list[torch.Tensor]
    sites: list[tuple[str, int]]


def meta_run(namespace: Mapping[str, Any]) -> MetaRun:
    """Build the Model and run its forward on the meta device, as runtime.measure does, recording
    its reductions."""
    with seeded(0), torch.no_grad(), torch.device("meta"):
        model = namespace["Model"](*namespace["get_init_inputs"]())
        inputs = list(namespace["get_inputs"]())
        recorder = _Recorder()
        with recorder:
            out = model(*inputs)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    return MetaRun(inputs=inputs, state=state, outputs=_tensors(out), sites=recorder.sites)
