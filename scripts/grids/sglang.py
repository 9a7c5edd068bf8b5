"""SGLang's kernel tests (sgl-project/sglang) as grids for kernelgen_ops.

- decode attention (test/srt/test_triton_attention_kernels.py, test_grouped_decode_attention):
  SGLang's token pool, one token a page (kv_indices per token), bf16, the grouped kernel against
  the plain one at atol 3e-2 (torch.allclose's rtol 1e-5). test_decode_attention runs without a
  check ("just to ensure there is no error") and is left out.
- fused_moe (test/srt/test_fused_moe.py, test_various_configurations): x, w1, w2 and the router
  scores N(0, 0.01^2); softmax over the scores, top-k, not renormalized; rtol 1e-1, atol 1e-2.
  The fp8 w8a8 half is left out (kernelgen's fused_moe takes 16-bit weights).
- per-token-group fp8 quantization, group 128 (act_quant): sgl-kernel's test against SGLang's
  Triton kernel (codes within one e4m3 step, fewer than 0.5% off by one, 4% at 4096 entries or
  fewer; scales rtol 1e-3, atol 1e-5) on its bf16 data (N(0, 1), each entry whose own N(0, 1)
  draw is below 0.001 times 10), row-major scales only (the column-major, TMA-aligned and UE8M0
  layouts are outputs kernelgen's act_quant does not write, int8 another format); and
  test/srt/test_block_fp8.py's TestPerTokenGroupQuantFP8 at group 128 (its only group size
  kernelgen has), x = rand, q within rtol 0.15, scales torch.allclose.
- block fp8 GEMM (test/srt/test_block_fp8.py, TestW8A8BlockFP8Matmul): 128x128 blocks, a and b
  U(-448, 448) cast to e4m3, scales U(0, 0.01); mean relative error below 1e-3. Output bf16
  only (kernelgen's fp8_gemm writes bf16; the test's fp32 and fp16 outputs are left out).
"""

from __future__ import annotations

from itertools import product

from grids import Check, Grid, GridCase, Source

REPO = "sgl-project/sglang"


def _src(path: str, test: str, commit: str) -> Source:
    return Source(repo=REPO, path=path, test=test, commit=commit)


GRIDS = [
    Grid(
        name="sglang.decode_attn.test_grouped_decode_attention",
        peer="sglang",
        op="decode_attn",
        source=_src(
            "test/srt/test_triton_attention_kernels.py",
            "TestTritonAttention.test_grouped_decode_attention",
            "0c74cb494fb5692876737c6505567791e9591bf8",
        ),
        checks={"bfloat16": [Check(atol=3e-2, rtol=1e-5)]},
        cases=[
            GridCase(
                dtype="bfloat16",
                params={
                    "batch": b,
                    "kv_len": s,
                    "page": 1,
                    "hq": hq,
                    "hkv": hkv,
                    "d": d,
                    "dv": dv,
                    "table": "consecutive",
                    "cache": "separate",
                },
            )
            for s, (b, hq, hkv, d, dv) in product(
                [5, 100, 128, 500],
                [
                    (2, 16, 16, 64, 64),
                    (2, 16, 1, 64, 64),
                    (2, 64, 1, 13, 13),
                    (2, 128, 1, 80, 80),
                    (2, 128, 2, 512, 512),
                    (2, 128, 1, 576, 512),
                ],
            )
        ],
    ),
    Grid(
        name="sglang.fused_moe.test_various_configurations",
        peer="sglang",
        op="fused_moe",
        source=_src(
            "test/srt/test_fused_moe.py",
            "TestFusedMOE.test_various_configurations",
            "018e0e1b9cbee628b8ff76eb38788bbcd40001f0",
        ),
        checks={d: [Check(atol=1e-2, rtol=1e-1)] for d in ("float16", "bfloat16")},
        # m tokens, n the intermediate size, k the hidden size, e experts
        cases=[
            GridCase(
                dtype=dtype,
                values="normal_std",
                params={"m": m, "inter": n, "hidden": k, "experts": e, "topk": topk, "std": 0.01},
            )
            for m, n, k, e, topk, dtype in product(
                [1, 33, 64, 222],
                [128, 1024],
                [128, 511, 1024],
                [8, 64],
                [2, 6],
                ["float16", "bfloat16"],
            )
        ],
    ),
    Grid(
        name="sglang.act_quant.test_per_token_group_quant_with_column_major",
        peer="sglang",
        op="act_quant",
        source=_src(
            "sgl-kernel/tests/test_per_token_group_quant_8bit.py",
            "test_per_token_group_quant_with_column_major",
            "01da1d0757479f006103c888b482a0398cba6dd8",
        ),
        checks={
            "bfloat16": [
                Check(kind="fp8_codes", limit=0.005, small_limit=0.04, small_numel=4096),
                Check(atol=1e-5, rtol=1e-3),
            ]
        },
        cases=[
            GridCase(shape=[tokens, hidden], dtype="bfloat16", values="randn_half_x10")
            for tokens, hidden in product(
                [1, 4, 16, 64, 127, 128, 512, 1024, 4096, 8192],
                [512, 1024, 1536, 2048, 4096, 7168, 16384],
            )
        ],
    ),
    Grid(
        name="sglang.act_quant.test_per_token_group_quant_fp8",
        peer="sglang",
        op="act_quant",
        source=_src(
            "test/srt/test_block_fp8.py",
            "TestPerTokenGroupQuantFP8.test_per_token_group_quant_fp8",
            "4952a663898bd2e71a2e2436a2b267e36e75f24c",
        ),
        checks={
            d: [Check(atol=1e-8, rtol=0.15), Check(atol=1e-8, rtol=1e-5)]
            for d in ("float16", "bfloat16", "float32")
        },
        cases=[
            GridCase(shape=[tokens, d], dtype=dtype, values="rand")
            for tokens, d, dtype in product(
                [7, 83, 2048], [512, 4096, 5120, 13824], ["float16", "bfloat16", "float32"]
            )
        ],
    ),
    Grid(
        name="sglang.fp8_gemm.test_w8a8_block_fp8_matmul",
        peer="sglang",
        op="fp8_gemm",
        source=_src(
            "test/srt/test_block_fp8.py",
            "TestW8A8BlockFP8Matmul.test_w8a8_block_fp8_matmul",
            "4952a663898bd2e71a2e2436a2b267e36e75f24c",
        ),
        checks={"bfloat16": [Check(kind="relmean", limit=1e-3)]},
        cases=[
            GridCase(dtype="bfloat16", values="fp8_uniform", params={"m": m, "n": n, "k": k})
            for m, n, k in product(
                [1, 7, 83, 512, 2048],
                [128, 512, 1024, 4096, 7748, 13824],
                [256, 4096, 5120, 3884, 13824],
            )
        ],
    ),
]
