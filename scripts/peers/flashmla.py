"""FlashMLA's sparse attention (sgl-flash-mla 1.0.0, flash_mla.flash_mla_sparse_fwd), for
sparse_attn.

Its sparse kernels are DeepSeek's MLA: one latent KV head (h_kv = 1) of 576 (V3.2) or 512 dims
that serves as both K and V, V its first d_v = 512 dims, 64 or 128 query heads; the SM90 kernel is
the legacy half of the wheel (use_legacy=True). A shape outside that is refused with the reason
(references/sparse_attn.py benchmarks D = 128 with v as wide as k). Where it runs, kv is the
case's k and V is k's first 512 dims, not the case's v: the answer is checked against the
reference on those operands (eager with v = k[..., :512]).

The wheel declares torch >= 2.14.1 and loads through torch's stable ABI: on the GPU machine's
torch 2.11 it may not load, and the record then says why.
"""

from __future__ import annotations

from typing import Any

from peers import Binder, Candidate, Prepared

HEADS = (64, 128)
QK_DIMS = (576, 512)
V_DIM = 512


def refusal(q_shape, k_shape, v_shape) -> str | None:
    """Why FlashMLA's sparse kernel cannot take these shapes, or None."""
    _, heads, qk = q_shape
    _, kv_heads, k_dim = k_shape
    why = []
    if kv_heads != 1:
        why.append(f"{kv_heads} KV heads (it takes one latent head)")
    if qk not in QK_DIMS or k_dim != qk:
        why.append(f"q/k dim {qk}/{k_dim} (it takes {' or '.join(map(str, QK_DIMS))})")
    if v_shape[-1] != V_DIM:
        why.append(f"v dim {v_shape[-1]} (it takes {V_DIM}, k's first {V_DIM} dims)")
    if heads not in HEADS:
        why.append(f"{heads} query heads (it takes 64 or 128)")
    return "FlashMLA's sparse kernel refuses " + ", ".join(why) if why else None


def _sparse(use_legacy: bool) -> Binder:
    from flash_mla import flash_mla_sparse_fwd

    from kernelgen.spec import load_spec

    eager = load_spec("sparse_attn").eager

    def bind(args: list[Any]) -> Prepared:
        q, k, v, indices, scale = args
        why = refusal(tuple(q.shape), tuple(k.shape), tuple(v.shape))
        if why:
            raise ValueError(why)
        shared_v = k[..., :V_DIM]
        expected = eager(q, k, shared_v, indices, scale)

        def call(q, kv, indices):
            out, _, _ = flash_mla_sparse_fwd(
                q, kv, indices, float(scale), d_v=V_DIM, use_legacy=use_legacy,
                return_log2_lse=False if use_legacy else None,
            )  # fmt: skip
            return out

        note = "V = k[..., :512] (MLA's latent KV), not the case's v"
        return Prepared(call, [q, k, indices[:, None, :].contiguous()], expected, note)

    return bind


CANDIDATES: dict[str, list[Candidate]] = {
    "sparse_attn": [
        ("flash_mla.flash_mla_sparse_fwd(q, kv, indices, scale, d_v=512, use_legacy=True)",
         lambda: _sparse(True)),
        ("flash_mla.flash_mla_sparse_fwd(q, kv, indices, scale, d_v=512)",
         lambda: _sparse(False)),
    ],
}  # fmt: skip
