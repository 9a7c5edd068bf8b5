"""FlashInfer's batch decode test (flashinfer-ai/flashinfer) as a grid for kernelgen_ops.

test_batch_decode_with_paged_kv_cache: K and V in one paged tensor [pages, 2, page, Hkv, D]
(NHD), each request's pages consecutive, every request kv_len long, fp16 q and cache, checked
against single_decode_with_kv_cache at rtol = atol = 1e-3. Left out: the fp8 KV cache (kernelgen's
decode_attn keeps the cache in q's dtype), ROPE_LLAMA (a rotary embedding inside the kernel),
the non-contiguous layout (the test's parametrization runs contiguous_kv=True only).
"""

from __future__ import annotations

from itertools import product

from grids import Check, Grid, GridCase, Source

GRIDS = [
    Grid(
        name="flashinfer.decode_attn.test_batch_decode_with_paged_kv_cache",
        peer="flashinfer",
        op="decode_attn",
        source=Source(
            repo="flashinfer-ai/flashinfer",
            path="tests/attention/test_batch_decode_kernels.py",
            test="test_batch_decode_with_paged_kv_cache",
            commit="fb28d7242b3506a2348265962041acc1fb56cca4",
        ),
        checks={"float16": [Check(atol=1e-3, rtol=1e-3)]},
        cases=[
            GridCase(
                dtype="float16",
                params={
                    "batch": batch,
                    "kv_len": kv_len,
                    "page": page,
                    "hkv": 4,
                    "hq": hq,
                    "d": d,
                    "table": "consecutive",
                    "cache": "kv_interleaved",
                },
            )
            for batch, kv_len, page, hq, d in product(
                [12, 17, 128], [54, 97, 512, 2048, 16384], [1, 8, 16], [4, 32], [128, 256, 512]
            )
        ],
    )
]
