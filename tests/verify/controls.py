"""Negative controls: candidates that cheat or cut corners, built per operator.

Each must be rejected (DESIGN.md): a kernel that writes zeros, one that writes nothing into an
`empty_like` output, an input passthrough, a torch fallback (seen by the static rules, and one
hidden from them that only the run-time guard sees), the reference plus noise, and the seed
computing in lower precision.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The operator's parameters, its output shape, and a torch expression of the reference.
OPS = {
    "softmax": ("x", "x.shape", "torch.softmax(x, -1)"),
    "rms_norm": (
        "x, weight, eps=1e-6",
        "x.shape",
        "torch.rms_norm(x, (x.shape[-1],), weight, eps)",
    ),
    "silu_and_mul": ("x", "(*x.shape[:-1], x.shape[-1] // 2)", "None"),
    "router_gemm": ("x, w", "(x.shape[0], w.shape[0])", "torch.matmul(x.float(), w.T)"),
    "fused_moe": (
        "x, w1, w2, topk_weights, topk_ids",
        "x.shape",
        # Each token's k experts gathered, both GEMMs as einsums: right on the small cases.
        "torch.einsum('mk,mkh->mh', topk_weights.to(x.dtype), torch.einsum('mki,mkhi->mkh', "
        "torch.nn.functional.silu(torch.einsum('mh,mkih->mki', x, "
        "w1[topk_ids.long()][:, :, : w1.shape[1] // 2])) * torch.einsum('mh,mkih->mki', x, "
        "w1[topk_ids.long()][:, :, w1.shape[1] // 2 :]), w2[topk_ids.long()]))",
    ),
    "decode_attn": (
        "q, k_cache, v_cache, block_table, seq_lens, scale",
        "q.shape",
        # Every request's whole table row gathered, the tokens past its length zeroed (they hold
        # NaN) and masked, GQA inside SDPA: right on every case.
        "torch.nn.functional.scaled_dot_product_attention(q[:, :, None], *(torch.where("
        "(torch.arange(block_table.shape[1] * k_cache.shape[1]) < seq_lens[:, None])[:, None, :, "
        "None], c[block_table.long()].flatten(1, 2).transpose(1, 2), 0) for c in (k_cache, "
        "v_cache)), attn_mask=(torch.arange(block_table.shape[1] * k_cache.shape[1]) < "
        "seq_lens[:, None])[:, None, None], "
        "scale=scale, enable_gqa=True)[:, :, 0]",
    ),
    "sparse_attn": (
        "q, k, v, indices, scale",
        "(*q.shape[:2], v.shape[-1])",  # v's head dim (MLA's 512 under q's 576)
        # Every token's selected rows gathered, its -1 slots zeroed (row 0 may hold NaN) and
        # masked, GQA inside SDPA, the rows with no valid slot zeros: right on every case.
        "torch.where((indices >= 0).any(-1)[:, None, None], torch.nn.functional."
        "scaled_dot_product_attention(q[:, :, None], *(torch.where((indices >= 0)[:, None, :, "
        "None], c[indices.clamp_min(0).long()].transpose(1, 2), 0) for c in (k, v)), "
        "attn_mask=(indices >= 0)[:, None, None], scale=scale, enable_gqa=True)[:, :, 0], 0)",
    ),
    # The dense product with H built from its definition, H[i, j] = (-1)^popcount(i & j).
    "hadamard": (
        "x",
        "x.shape",
        "x @ torch.tensor([[(-1.0) ** bin(i & j).count('1') * x.shape[-1] ** -0.5 for j in "
        "range(x.shape[-1])] for i in range(x.shape[-1])], dtype=x.dtype, device=x.device)",
    ),
    "act_quant": (
        "x",
        "x.shape",
        "(lambda g, s: (torch.where(s > 0, g / s, 0.0).reshape(x.shape).to(torch.float8_e4m3fn), "
        "s.reshape(g.shape[:2])))(x.float().reshape(x.shape[0], -1, 128), x.float().reshape("
        "x.shape[0], -1, 128).abs().amax(-1, keepdim=True) / 448)",
    ),
    "topk": ("x, k", "(x.shape[0], k)", "torch.topk(x, k, dim=-1).indices.to(torch.int32)"),
    # Both operands dequantized in fp32 (b's last scale row cut to N), one matmul, bf16 out.
    "fp8_gemm": (
        "a, a_scale, b, b_scale",
        "(a.shape[0], b.shape[0])",
        "((a.float() * a_scale.repeat_interleave(128, 1)) @ (b.float() * b_scale."
        "repeat_interleave(128, 0)[: b.shape[0]].repeat_interleave(128, 1)).T).to(torch.bfloat16)",
    ),
}
# The output dtype where it is not x's.
OUT_DTYPE = {"router_gemm": "torch.float32", "topk": "torch.int32", "fp8_gemm": "torch.bfloat16"}
# Operators with several outputs: the shape and dtype of each, in order.
OUTPUTS = {
    "act_quant": [
        ("x.shape", "torch.float8_e4m3fn"),
        ("(x.shape[0], x.shape[1] // 128)", "torch.float32"),
    ],
}

_HEADER = """
import torch
import triton
import triton.language as tl


@triton.jit
def _fill_kernel(y_ptr, n, WRITE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WRITE:
        tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty),
                 mask=offs < n)
"""


def _launcher(op: str, body: str) -> str:
    params, shape, _ = OPS[op]
    return f"{_HEADER}\n\ndef {op}({params}):\n{body}"


def _first(op: str) -> str:
    """The operator's first parameter (x, or decode_attn's q): the tensor the generic controls
    take their dtype and device from, and pass through."""
    return OPS[op][0].split(",")[0].strip()


def _filled(op: str, write: bool) -> str:
    """A launcher that allocates each output and has a kernel write zeros into it, or nothing."""
    x = _first(op)
    outs = OUTPUTS.get(op) or [(OPS[op][1], OUT_DTYPE.get(op, f"{x}.dtype"))]
    body = ""
    for i, (shape, dtype) in enumerate(outs):
        grid, n = (
            ("triton.cdiv(max(y{i}.numel(), 1), 1024)", f"y{i}.numel()") if write else ("1", "0")
        )
        body += f"""    y{i} = torch.empty({shape}, dtype={dtype}, device={x}.device)
    _fill_kernel[({grid.format(i=i)},)](y{i}, {n}, WRITE={write}, BLOCK=1024)
"""
    names = ", ".join(f"y{i}" for i in range(len(outs)))
    return _launcher(op, body + f"    return {names if len(outs) == 1 else f'({names})'}\n")


def zeros(op: str) -> str:
    return _filled(op, write=True)


def empty_like(op: str) -> str:
    return _filled(op, write=False)


def passthrough(op: str) -> str:
    x = _first(op)
    ret = x if op != "silu_and_mul" else "x[..., : x.shape[-1] // 2]"
    return _launcher(
        op,
        f"""    _fill_kernel[(1,)]({x}, 0, WRITE=False, BLOCK=16)
    return {ret}
""",
    )


def torch_fallback(op: str) -> str:
    _, _, expr = OPS[op]
    if op == "silu_and_mul":
        expr = "torch.nn.functional.silu(x[..., : x.shape[-1] // 2]) * x[..., x.shape[-1] // 2 :]"
    return _launcher(
        op,
        f"""    _fill_kernel[(1,)]({_first(op)}, 0, WRITE=False, BLOCK=16)
    return {expr}
""",
    )


def hidden_fallback(op: str) -> str:
    """Arithmetic through operators: no call the static rules can name; the guard sees aten."""
    if op == "silu_and_mul":
        return _launcher(
            op,
            """    _fill_kernel[(1,)](x, 0, WRITE=False, BLOCK=16)
    d = x.shape[-1] // 2
    return x[..., :d] * x[..., d:]
""",
        )
    if op == "fp8_gemm":  # torch has no fp8 arithmetic on the CPU: `a * 1` would only crash
        return _launcher(
            op,
            """    _fill_kernel[(1,)](a, 0, WRITE=False, BLOCK=16)
    return a_scale @ b_scale.T
""",
        )
    x = _first(op)
    return _launcher(
        op,
        f"""    _fill_kernel[(1,)]({x}, 0, WRITE=False, BLOCK=16)
    return {x} * 1
""",
    )


def _seed(op: str) -> str:
    return (ROOT / "seeds" / f"{op}.py").read_text()


def _changed(src: str, old: str, new: str) -> str:
    """`src` with `old` replaced by `new`. `old` must be there: a control whose edit no longer
    matches the seed would be the seed itself, accepted, and read as a hole."""
    if old not in src:
        raise ValueError(f"control: {old!r} is no longer in the seed")
    return src.replace(old, new)


def noisy(op: str) -> str:
    """The reference plus relative noise of 1e-3: the right shape everywhere, wrong values."""
    src = _seed(op)
    if op == "act_quant":  # q's noise would round away: the scales carry it
        store = "tl.store(s_ptr + row * stride_sm + group, scale"
        return _changed(src, store, f"{store} * (1.0 + 1e-3 * tl.sin(group * 12.9898))")
    if op == "topk":  # every fifth column's index one too high: a neighbour for the entry
        store = "tl.store(i_row + at_gt, cols, "
        return _changed(src, store, "tl.store(i_row + at_gt, cols + (cols % 5 == 4), ")
    if op == "sparse_attn":
        noise = "(1.0 + 1e-3 * tl.sin(dvs.to(tl.float32) * 12.9898))"
        return _changed(src, "acc / l_i, 0.0)", f"acc / l_i * {noise}, 0.0)")
    if op == "decode_attn":
        out = "    out = acc / l_i\n"
        noise = "(1.0 + 1e-3 * tl.sin(ds.to(tl.float32) * 12.9898))"
        return _changed(src, out, f"    out = acc / l_i * {noise}\n")
    if op == "fused_moe":
        store = "    tl.store(y_ptr + m * stride_ym + hs, "
        noise = "(1.0 + 1e-3 * tl.sin(hs.to(tl.float32) * 12.9898))"
        return _changed(src, store, f"    acc = acc * {noise}\n{store}")
    if op == "router_gemm":
        store = "tl.store(y, acc, "
        noise = "(1.0 + 1e-3 * tl.sin(rn[None, :].to(tl.float32) * 12.9898))"
        return _changed(src, store, f"tl.store(y, acc * {noise}, ")
    if op == "fp8_gemm":  # 1e-3 is below bf16's rounding (2^-9 to 2^-8): 5%, a dozen bf16 steps
        store = "tl.store(out, acc.to("
        noise = "(1.0 + 5e-2 * tl.sin(rn[None, :].to(tl.float32) * 12.9898))"
        return _changed(src, store, f"tl.store(out, (acc * {noise}).to(")
    store = "tl.store(y_ptr + row * stride_ym + cols, "
    return _changed(src, store, store + "(1.0 + 1e-3 * tl.sin(cols.to(tl.float32) * 12.9898)) * ")


def lower_precision(op: str) -> str:
    """The seed with its fp32 math done in fp16 (exp stays fp32 where Triton demands it)."""
    src = _seed(op)
    if op == "router_gemm":
        # Products of fp16 operands, accumulated in fp32: the 10-bit mantissa of TF32, which the
        # interpreter cannot show (its fp32 dot is exact fp32 whatever input_precision says).
        dot = "acc = tl.dot(x, w, acc, "
        return _changed(src, dot, "acc = tl.dot(x.to(tl.float16), w.to(tl.float16), acc, ")
    if op == "fp8_gemm":
        # Each block's dot summed in fp16 (an accumulator the fp8 tensor cores offer): e4m3
        # products reach 448^2, past fp16's 65504, and a block's sum overflows to inf.
        dot = "acc += tl.dot(a, b) * "
        return _changed(src, dot, "acc += tl.dot(a, b, out_dtype=tl.float16).to(tl.float32) * ")
    src = _changed(src, "tl.float32", "tl.float16")
    if op == "silu_and_mul":
        src = _changed(src, "tl.exp(-a)", "tl.exp(-a.to(tl.float32)).to(tl.float16)")
    if op == "fused_moe":
        src = _changed(src, "tl.exp(-gate)", "tl.exp(-gate.to(tl.float32)).to(tl.float16)")
    if op == "sparse_attn":
        for arg in ("m_i - m_use", "s - m_use"):
            exp = f"tl.exp({arg})"
            src = _changed(src, exp, f"tl.exp(({arg}).to(tl.float32)).to(tl.float16)")
    if op == "decode_attn":
        for arg in ("m_i - m_new", "s - m_new"):
            exp = f"tl.exp({arg})"
            src = _changed(src, exp, f"tl.exp(({arg}).to(tl.float32)).to(tl.float16)")
    if op == "softmax":
        src = _changed(
            src,
            "num = tl.exp(x - tl.max(x, axis=0))",
            "num = tl.exp((x - tl.max(x, axis=0)).to(tl.float32)).to(tl.float16)",
        )
    return src


def bf16_weights(op: str) -> str:
    """The seed with the router weights rounded to bf16 in the kernel before the dot: the
    shortcut that keeps the shape of an fp32 GEMM and changes which experts win."""
    src = _seed(op)
    dot = "        acc = tl.dot(x, w, acc, "
    return _changed(src, dot, "        w = w.to(tl.bfloat16).to(tl.float32)\n" + dot)


def unweighted(op: str) -> str:
    """The seed with every expert weighted 1: topk_weights read nowhere."""
    src = _seed(op)
    load = "weight = tl.load(tw_ptr + m * stride_twm + j * stride_twk)"
    return _changed(src, load, "weight = 1.0")


def first_slot_only(op: str) -> str:
    """The seed summing only each token's first expert: right wherever k = 1."""
    src = _seed(op)
    loop = "for j in range(0, topk):"
    return _changed(src, loop, "for j in range(0, 1):")


def half_intermediate(op: str) -> str:
    """The seed with silu(gate) * up rounded to x's dtype between the GEMMs, as SGLang's kernels
    keep it: off by ~2 units of the dtype relative to a token's outputs, so near-zero outputs
    miss the per-element tolerance (the judge asks for an fp32 intermediate)."""
    src = _seed(op)
    act = "act = gate / (1.0 + tl.exp(-gate)) * up"
    return _changed(src, act, act + ".to(x_ptr.dtype.element_ty).to(tl.float32)")


def ignores_seq_lens(op: str) -> str:
    """The seed attending over every entry of the request's table row (its row stride is its
    width: the table is contiguous), not its first seq_lens tokens: reads the NaN past them."""
    src = _seed(op)
    load = "n = tl.load(lens_ptr + b * stride_lb)"
    return _changed(src, load, "n = stride_tb * PAGE")


def whole_pages(op: str) -> str:
    """The seed with the last page read whole: right wherever a length is a multiple of the page."""
    src = _seed(op)
    live = "live = j * PAGE + slots < n"
    return _changed(src, live, "live = j * PAGE + slots < tl.cdiv(n, PAGE) * PAGE")


def kv_heads_interleaved(op: str) -> str:
    """The seed mapping query head h to KV head h % Hkv instead of h // group (the other
    repeat_kv order): right wherever there is one KV head or one query head per KV head."""
    src = _seed(op)
    head = "kv_head = h // group"
    return _changed(src, head, "kv_head = h % (tl.num_programs(1) // group)")


def no_running_max(op: str) -> str:
    """The seed with a softmax that never subtracts the max: right while the scores stay below
    exp's fp32 range (88.7), inf / inf past it."""
    src = _seed(op)
    line = "m_new = tl.maximum(m_i, tl.max(s, axis=0), propagate_nan=tl.PropagateNan.ALL)"
    return _changed(src, line, "m_new = tl.zeros([1], tl.float32)")


def reads_unused_slots(op: str) -> str:
    """The seed taking every slot up to topk as valid: it reads row -1 of k and v for each -1
    slot (the NaN storage row before them) and weights it in; right wherever rows are full."""
    return _changed(_seed(op), "valid = rows >= 0", "valid = in_row")


def empty_rows_nan(op: str) -> str:
    """The seed without its zeros for a token with no valid slot: 0 / 0 there, NaN."""
    return _changed(_seed(op), "out = tl.where(n_valid > 0, acc / l_i, 0.0)", "out = acc / l_i")


def unscaled(op: str) -> str:
    """The seed without the D^-0.5: the unnormalized transform, off by sqrt(D) everywhere."""
    src = _seed(op)
    return _changed(src, "    y = acc * scale\n", "    y = acc\n")


def short_parity(op: str) -> str:
    """The seed folding only the low 8 bits of i & j into the sign: right while D <= 256, wrong
    signs from column 256 on (the CPU grid's D = 1024 case)."""
    src = _seed(op)
    folds = "        bits = bits ^ (bits >> 16)\n        bits = bits ^ (bits >> 8)\n"
    return _changed(src, folds, "")


def pow2_scales(op: str) -> str:
    """The seed with each scale rounded up to a power of two (the UE8M0 scales of some FP8
    recipes): q * scale stays within a step of x, and the scale is not amax / 448."""
    src = _seed(op)
    return _changed(src, "scale = amax / 448.0", "scale = tl.exp2(tl.ceil(tl.log2(amax / 448.0)))")


def no_zero_guard(op: str) -> str:
    """The seed dividing by the scale everywhere: NaN for an all-zero group (0 / 0)."""
    src = _seed(op)
    return _changed(src, "q = tl.where(scale > 0, x / scale, 0.0)", "q = x / scale")


def below_threshold(op: str) -> str:
    """The seed filling the slots left after the values above the k-th largest with the first
    values at or below it in column order, not those equal to it: k distinct indices, one or
    more of a smaller value (an off-by-one threshold)."""
    return _changed(_seed(op), "eq = ((v == t) & ok)", "eq = ((v <= t) & ok)")


def smallest(op: str) -> str:
    """The seed selecting the k smallest values (it ranks -x): a wrong set of the right size,
    right only where k = N."""
    load = "mask=ok, other=0.0).to(tl.float32)"
    return _changed(_seed(op), load, load + " * -1.0")


def repeats_first(op: str) -> str:
    """The seed with its last slot overwritten by its first index: the right size reached by
    an index chosen twice (right only where k = 1). CPU only: on a GPU the read of its own
    store would race."""
    end = "        done_eq += tl.sum(eq, axis=0)\n"
    return _changed(_seed(op), end, end + "    tl.store(i_row + k - 1, tl.load(i_row))\n")


_FP8_STEP = "acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]"


def no_scales(op: str) -> str:
    """The seed summing the raw e4m3 products: neither scale read."""
    return _changed(_seed(op), _FP8_STEP, "acc += tl.dot(a, b)")


def a_scale_only(op: str) -> str:
    """The seed without the weight's block scales (as if b had one per-tensor scale of 1)."""
    return _changed(_seed(op), _FP8_STEP, "acc += tl.dot(a, b) * a_s[:, None]")


def first_a_scale(op: str) -> str:
    """The seed taking each row's first a scale for every K block: right only where K = 128."""
    return _changed(_seed(op), "a_s = tl.load(a_s_rows + kb, ", "a_s = tl.load(a_s_rows, ")


def first_b_scale_row(op: str) -> str:
    """The seed taking b_scale's first row for every output column: right only where N <= 128."""
    rows = "b_s_cols = b_s_ptr + (rn // GROUP) * stride_bsn"
    return _changed(_seed(op), rows, "b_s_cols = b_s_ptr + rn * 0")


def a_scale_row_blocks(op: str) -> str:
    """The seed reading a's scales as if they were b's, one per 128 rows: right only where M = 1."""
    rows = "a_s_rows = a_s_ptr + rm * stride_asm"
    return _changed(_seed(op), rows, "a_s_rows = a_s_ptr + (rm // GROUP) * stride_asm")


CONTROLS = {
    "zeros": (zeros, {"incorrect"}),
    "empty_like": (empty_like, {"incorrect"}),
    "passthrough": (passthrough, {"incorrect", "aliasing", "static"}),
    "torch_fallback": (torch_fallback, {"static"}),
    "hidden_fallback": (hidden_fallback, {"provenance", "static"}),
    "noisy": (noisy, {"incorrect", "precision"}),
    "lower_precision": (lower_precision, {"incorrect", "precision"}),
}

# Controls of one operator: (builder, categories, a phrase the reason must hold).
OP_CONTROLS = {
    ("router_gemm", "bf16_weights"): (bf16_weights, {"incorrect"}, "sqrt(sum_k"),
    ("fused_moe", "unweighted"): (unweighted, {"incorrect"}, "entries off"),
    ("fused_moe", "first_slot_only"): (first_slot_only, {"incorrect"}, "entries off"),
    ("fused_moe", "half_intermediate"): (half_intermediate, {"incorrect"}, "entries off"),
    ("decode_attn", "ignores_seq_lens"): (ignores_seq_lens, {"incorrect"}, "NaN at"),
    ("decode_attn", "whole_pages"): (whole_pages, {"incorrect"}, "NaN at"),
    ("decode_attn", "kv_heads_interleaved"): (kv_heads_interleaved, {"incorrect"}, "entries off"),
    ("decode_attn", "no_running_max"): (no_running_max, {"incorrect"}, "NaN at"),
    ("sparse_attn", "reads_unused_slots"): (
        reads_unused_slots,
        {"incorrect"},
        "where the reference is",
    ),
    ("sparse_attn", "empty_rows_nan"): (empty_rows_nan, {"incorrect"}, "selects no KV position"),
    ("sparse_attn", "kv_heads_interleaved"): (kv_heads_interleaved, {"incorrect"}, "entries off"),
    ("sparse_attn", "no_running_max"): (no_running_max, {"incorrect"}, "NaN at"),
    ("hadamard", "unscaled"): (unscaled, {"incorrect"}, "entries off"),
    ("hadamard", "short_parity"): (short_parity, {"incorrect"}, "entries off"),
    ("act_quant", "pow2_scales"): (pow2_scales, {"incorrect"}, "expected amax / 448"),
    ("act_quant", "no_zero_guard"): (no_zero_guard, {"incorrect"}, "q nan"),
    ("topk", "below_threshold"): (below_threshold, {"incorrect"}, "wrong set of the right size"),
    ("topk", "smallest"): (smallest, {"incorrect"}, "wrong set of the right size"),
    ("topk", "repeats_first"): (repeats_first, {"incorrect"}, "chosen more than once"),
    ("fp8_gemm", "no_scales"): (no_scales, {"incorrect"}, "entries off"),
    ("fp8_gemm", "a_scale_only"): (a_scale_only, {"incorrect"}, "entries off"),
    ("fp8_gemm", "first_a_scale"): (first_a_scale, {"incorrect"}, "entries off"),
    ("fp8_gemm", "first_b_scale_row"): (first_b_scale_row, {"incorrect"}, "entries off"),
    ("fp8_gemm", "a_scale_row_blocks"): (a_scale_row_blocks, {"incorrect"}, "entries off"),
}
