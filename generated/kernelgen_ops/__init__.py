"""kernelgen_ops: Triton kernels proposed, verified and measured by kernelgen.

Written by `kernelgen promote` from MANIFEST.json: do not edit by hand.

    kernelgen_ops.act_quant(...)     20261202-090205-agent-5e72/r01-c01, 0.98x vs best peer
    kernelgen_ops.decode_attn(...)   20261202-032133-agent-e9a6/r01-c01, 21.63x vs best peer
    kernelgen_ops.fp8_gemm(...)      20261202-215844-agent-8055/r01-c01-tuned, 1.66x vs best peer
    kernelgen_ops.fused_moe(...)     20261203-092552-agent-844f/r01-c01-tuned, 25.64x vs best peer
    kernelgen_ops.hadamard(...)      20261202-090420-agent-ef70/r03-c01, 1.40x vs best peer
    kernelgen_ops.rms_norm(...)      20261203-132139-agent-087d/r01-c01, 1.02x vs best peer
    kernelgen_ops.router_gemm(...)   20261205-051507-agent-44b7/r01-c01, 2.32x vs best peer
    kernelgen_ops.silu_and_mul(...)  seed, 1.00x vs best peer
    kernelgen_ops.softmax(...)       20261204-144946-agent-b8b6/r01-c01, 1.21x vs best peer
    kernelgen_ops.sparse_attn(...)   20261205-121717-agent-f073/r01-c01-tuned, 6.23x vs best peer
    kernelgen_ops.topk(...)          20261205-033417-agent-5842/r01-c01, 1.59x vs best peer

Each figure is the kernel's speedup over the best peer measured, geomean over shapes: at each
shape the fastest of torch eager, torch.compile, Liger and FlagGems that was timed there (below
1x: slower); available()[op]["best_peer"] gives each shape.

Each operator is also the torch custom op kernelgen_ops::<name>, so it works inside
torch.compile(fullgraph=True). available() tells where each kernel came from and what it
measured; enable() / disable() / use() route the matching torch calls to these kernels
(routable(): the operators whose spec names torch entry points, recorded in MANIFEST.json).
A call takes the kernel only where it measured faster than torch's op on this device
(configs/<op>.json "dispatch", shown by available()); set_dispatch("device") judges by
device time alone, for steps run as CUDA graphs; set_dispatch("kernel" | "torch") forces one
path, for testing.
"""

import torch

from . import _calls, _contracts, _runtime
from . import act_quant as _act_quant
from . import decode_attn as _decode_attn
from . import fp8_gemm as _fp8_gemm
from . import fused_moe as _fused_moe
from . import hadamard as _hadamard
from . import rms_norm as _rms_norm
from . import router_gemm as _router_gemm
from . import silu_and_mul as _silu_and_mul
from . import softmax as _softmax
from . import sparse_attn as _sparse_attn
from . import topk as _topk
from ._routing import disable as disable
from ._routing import enable as enable
from ._routing import routable as routable
from ._routing import routed as routed
from ._routing import use as use
from ._runtime import dispatch_mode as dispatch_mode
from ._runtime import set_dispatch as set_dispatch

__all__ = [
    "act_quant",
    "decode_attn",
    "fp8_gemm",
    "fused_moe",
    "hadamard",
    "rms_norm",
    "router_gemm",
    "silu_and_mul",
    "softmax",
    "sparse_attn",
    "topk",
]


def available() -> dict[str, dict]:
    """Each operator's provenance: source, run, proposer, device measured on, speedups."""
    return _runtime.available()


# act_quant: agent run 20261202-090205-agent-5e72/r01-c01 on NVIDIA H200, 0.98x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_act_quant_call = _calls.Call("act_quant", _contracts, _act_quant)


def _act_quant_impl(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _act_quant_call.fast(x)


def _act_quant_fake(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _contracts.fake_act_quant(x)


_act_quant_op = _runtime.register(
    "act_quant",
    _act_quant_impl,
    _act_quant_fake,
)


def act_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """act_quant(x): per-token-group FP8 quantization, group 128, as DeepSeek-V3/V4 quantize the
    activations that enter an FP8 GEMM. x (M, K) -> (q (M, K) float8_e4m3fn, scales (M, K/128)
    fp32): per group of 128 consecutive entries of a row, scale = amax / 448 (448: e4m3's largest
    finite) and q = x / scale rounded to e4m3, so that q * scale gives x back within one e4m3 step.

    Kernel: agent run 20261202-090205-agent-5e72/r01-c01 on NVIDIA H200, 0.98x vs the best peer; see
    kernelgen_ops.available()["act_quant"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _act_quant_op(x)
    return _act_quant_call.fast(x)


# decode_attn: agent run 20261202-032133-agent-e9a6/r01-c01 on NVIDIA H200, 21.63x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_decode_attn_call = _calls.Call("decode_attn", _contracts, _decode_attn)


def _decode_attn_impl(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    return _decode_attn_call.fast(q, k_cache, v_cache, block_table, seq_lens, scale)


def _decode_attn_fake(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    return _contracts.fake_decode_attn(q, k_cache, v_cache, block_table, seq_lens, scale)


_decode_attn_op = _runtime.register(
    "decode_attn",
    _decode_attn_impl,
    _decode_attn_fake,
)


def decode_attn(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """decode_attn(q, k_cache, v_cache, block_table, seq_lens, scale): attention of one query token
    per request over its paged KV cache (the decode step of serving; HPC-Ops' and SGLang's layout).

    Kernel: agent run 20261202-032133-agent-e9a6/r01-c01 on NVIDIA H200, 21.63x vs the best peer;
    see kernelgen_ops.available()["decode_attn"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _decode_attn_op(q, k_cache, v_cache, block_table, seq_lens, scale)
    return _decode_attn_call.fast(q, k_cache, v_cache, block_table, seq_lens, scale)


# fp8_gemm: tune run 20261202-215844-agent-8055/r01-c01-tuned on NVIDIA H200, 1.66x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_fp8_gemm_call = _calls.Call("fp8_gemm", _contracts, _fp8_gemm)


def _fp8_gemm_impl(
    a: torch.Tensor,
    a_scale: torch.Tensor,
    b: torch.Tensor,
    b_scale: torch.Tensor,
) -> torch.Tensor:
    return _fp8_gemm_call.fast(a, a_scale, b, b_scale)


def _fp8_gemm_fake(
    a: torch.Tensor,
    a_scale: torch.Tensor,
    b: torch.Tensor,
    b_scale: torch.Tensor,
) -> torch.Tensor:
    return _contracts.fake_fp8_gemm(a, a_scale, b, b_scale)


_fp8_gemm_op = _runtime.register(
    "fp8_gemm",
    _fp8_gemm_impl,
    _fp8_gemm_fake,
)


def fp8_gemm(
    a: torch.Tensor,
    a_scale: torch.Tensor,
    b: torch.Tensor,
    b_scale: torch.Tensor,
) -> torch.Tensor:
    """fp8_gemm(a, a_scale, b, b_scale): the block-scaled FP8 GEMM of DeepSeek-V3/V4's linear
    layers, out = dequant(a) @ dequant(b).T in bf16 (M, N).

    Kernel: tune run 20261202-215844-agent-8055/r01-c01-tuned on NVIDIA H200, 1.66x vs the best
    peer; see kernelgen_ops.available()["fp8_gemm"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _fp8_gemm_op(a, a_scale, b, b_scale)
    return _fp8_gemm_call.fast(a, a_scale, b, b_scale)


# fused_moe: tune run 20261203-092552-agent-844f/r01-c01-tuned on NVIDIA H200, 25.64x vs the best
# peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_fused_moe_call = _calls.Call("fused_moe", _contracts, _fused_moe)


def _fused_moe_impl(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    return _fused_moe_call.fast(x, w1, w2, topk_weights, topk_ids)


def _fused_moe_fake(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    return _contracts.fake_fused_moe(x, w1, w2, topk_weights, topk_ids)


_fused_moe_op = _runtime.register(
    "fused_moe",
    _fused_moe_impl,
    _fused_moe_fake,
)


def fused_moe(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    """fused_moe(x, w1, w2, topk_weights, topk_ids): the routed experts of a MoE layer, SwiGLU
    experts.

    Kernel: tune run 20261203-092552-agent-844f/r01-c01-tuned on NVIDIA H200, 25.64x vs the best
    peer; see kernelgen_ops.available()["fused_moe"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _fused_moe_op(x, w1, w2, topk_weights, topk_ids)
    return _fused_moe_call.fast(x, w1, w2, topk_weights, topk_ids)


# hadamard: agent run 20261202-090420-agent-ef70/r03-c01 on NVIDIA H200, 1.40x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_hadamard_call = _calls.Call("hadamard", _contracts, _hadamard)


def _hadamard_impl(x: torch.Tensor) -> torch.Tensor:
    return _hadamard_call.fast(x)


def _hadamard_fake(x: torch.Tensor) -> torch.Tensor:
    return _contracts.fake_hadamard(x)


_hadamard_op = _runtime.register(
    "hadamard",
    _hadamard_impl,
    _hadamard_fake,
)


def hadamard(x: torch.Tensor) -> torch.Tensor:
    """hadamard(x): x @ H_D * D^-0.5 over the last dimension, H_D the Sylvester Hadamard matrix of
    size D (a power of two, 64 to 4096 in the models): H_1 = [1], H_2n = [[H_n, H_n], [H_n, -H_n]],
    so H[i, j] = (-1)^popcount(i & j). DeepSeek-V4 rotates activations with it before FP8
    quantization (FlagGems 5.0.2 ships a Triton kernel for it); scaled by D^-0.5 it is orthonormal.

    Kernel: agent run 20261202-090420-agent-ef70/r03-c01 on NVIDIA H200, 1.40x vs the best peer; see
    kernelgen_ops.available()["hadamard"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _hadamard_op(x)
    return _hadamard_call.fast(x)


# rms_norm: agent run 20261203-132139-agent-087d/r01-c01 on NVIDIA H200, 1.02x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_rms_norm_call = _calls.Call("rms_norm", _contracts, _rms_norm)


def _rms_norm_impl(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-06) -> torch.Tensor:
    return _rms_norm_call.fast(x, weight, eps)


def _rms_norm_fake(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-06) -> torch.Tensor:
    return _contracts.fake_rms_norm(x, weight, eps)


_rms_norm_op = _runtime.register(
    "rms_norm",
    _rms_norm_impl,
    _rms_norm_fake,
)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-06) -> torch.Tensor:
    """rms_norm(x, weight, eps): x * rsqrt(mean(x^2, -1) + eps) * weight over the last dimension,
    computed in fp32 (or wider), returned in x's dtype.

    Kernel: agent run 20261203-132139-agent-087d/r01-c01 on NVIDIA H200, 1.02x vs the best peer; see
    kernelgen_ops.available()["rms_norm"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _rms_norm_op(x, weight, eps)
    return _rms_norm_call.fast(x, weight, eps)


# router_gemm: agent run 20261205-051507-agent-44b7/r01-c01 on NVIDIA H200, 2.32x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_router_gemm_call = _calls.Call("router_gemm", _contracts, _router_gemm)


def _router_gemm_impl(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return _router_gemm_call.fast(x, w)


def _router_gemm_fake(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return _contracts.fake_router_gemm(x, w)


_router_gemm_op = _runtime.register(
    "router_gemm",
    _router_gemm_impl,
    _router_gemm_fake,
)


def router_gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """router_gemm(x, w): MoE router scores, x @ w.T with x (M, K) in 16 bits and w (N, K) in fp32,
    returned in fp32 (M, N).

    Kernel: agent run 20261205-051507-agent-44b7/r01-c01 on NVIDIA H200, 2.32x vs the best peer; see
    kernelgen_ops.available()["router_gemm"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _router_gemm_op(x, w)
    return _router_gemm_call.fast(x, w)


# silu_and_mul: the seed on NVIDIA H200, 1.00x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_silu_and_mul_call = _calls.Call("silu_and_mul", _contracts, _silu_and_mul)


def _silu_and_mul_impl(x: torch.Tensor) -> torch.Tensor:
    return _silu_and_mul_call.fast(x)


def _silu_and_mul_fake(x: torch.Tensor) -> torch.Tensor:
    return _contracts.fake_silu_and_mul(x)


_silu_and_mul_op = _runtime.register(
    "silu_and_mul",
    _silu_and_mul_impl,
    _silu_and_mul_fake,
)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """silu_and_mul(x): for x[..., 2d], silu(x[..., :d]) * x[..., d:], of shape [..., d].

    Kernel: the seed on NVIDIA H200, 1.00x vs the best peer; see
    kernelgen_ops.available()["silu_and_mul"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _silu_and_mul_op(x)
    return _silu_and_mul_call.fast(x)


# softmax: agent run 20261204-144946-agent-b8b6/r01-c01 on NVIDIA H200, 1.21x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_softmax_call = _calls.Call("softmax", _contracts, _softmax)


def _softmax_impl(x: torch.Tensor) -> torch.Tensor:
    return _softmax_call.fast(x)


def _softmax_fake(x: torch.Tensor) -> torch.Tensor:
    return _contracts.fake_softmax(x)


_softmax_op = _runtime.register(
    "softmax",
    _softmax_impl,
    _softmax_fake,
)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """softmax(x): softmax over the last dimension of a tensor of any rank >= 1.

    Kernel: agent run 20261204-144946-agent-b8b6/r01-c01 on NVIDIA H200, 1.21x vs the best peer; see
    kernelgen_ops.available()["softmax"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _softmax_op(x)
    return _softmax_call.fast(x)


# sparse_attn: tune run 20261205-121717-agent-f073/r01-c01-tuned on NVIDIA H200, 6.23x vs the best
# peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_sparse_attn_call = _calls.Call("sparse_attn", _contracts, _sparse_attn)


def _sparse_attn_impl(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    return _sparse_attn_call.fast(q, k, v, indices, scale)


def _sparse_attn_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    return _contracts.fake_sparse_attn(q, k, v, indices, scale)


_sparse_attn_op = _runtime.register(
    "sparse_attn",
    _sparse_attn_impl,
    _sparse_attn_fake,
)


def sparse_attn(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """sparse_attn(q, k, v, indices, scale): attention of each query token over only the KV
    positions its top-k selector chose (DeepSeek's sparse attention, DSA: the lightning indexer's
    top-2048, references/topk.py, feeds FlashMLA's sparse kernels).

    Kernel: tune run 20261205-121717-agent-f073/r01-c01-tuned on NVIDIA H200, 6.23x vs the best
    peer; see kernelgen_ops.available()["sparse_attn"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _sparse_attn_op(q, k, v, indices, scale)
    return _sparse_attn_call.fast(q, k, v, indices, scale)


# topk: agent run 20261205-033417-agent-5842/r01-c01 on NVIDIA H200, 1.59x vs the best peer
# The contract, the dispatch and the launcher, answered once per key (_calls.py).
_topk_call = _calls.Call("topk", _contracts, _topk)


def _topk_impl(x: torch.Tensor, k: int) -> torch.Tensor:
    return _topk_call.fast(x, k)


def _topk_fake(x: torch.Tensor, k: int) -> torch.Tensor:
    return _contracts.fake_topk(x, k)


_topk_op = _runtime.register(
    "topk",
    _topk_impl,
    _topk_fake,
)


def topk(x: torch.Tensor, k: int) -> torch.Tensor:
    """topk(x, k): the sparse-attention top-k selector. For each row of x (B, N) fp32, the indices
    of its k largest values, in any order; the values themselves are not returned. DeepSeek-V3.2's
    lightning indexer picks the 2048 cached tokens each query attends to this way.

    Kernel: agent run 20261205-033417-agent-5842/r01-c01 on NVIDIA H200, 1.59x vs the best peer; see
    kernelgen_ops.available()["topk"].
    """
    # Under torch.compile the custom op keeps the kernel opaque to the tracer; in eager mode the
    # call goes to the launcher directly, which skips the dispatcher's per-call overhead. Torch's
    # op takes it where the kernel measured slower on this device (kernelgen_ops.set_dispatch).
    if torch.compiler.is_compiling():
        return _topk_op(x, k)
    return _topk_call.fast(x, k)
