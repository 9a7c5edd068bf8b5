"""FlashInfer (flashinfer-python 0.6.15.post1): batch decode over a paged KV cache, for decode_attn.

references/decode_attn.py's cache is FlashInfer's NHD layout as it is: k_cache and v_cache of
(pages, page, Hkv, D), passed as the (k, v) tuple, the case's page size (16, 32 or 64) FlashInfer's
page_size. Its block table and lengths become FlashInfer's CSR page lists (paged_indices): per
request the ceil(n / page) pages it owns, in order, and the tokens in its last page.
BatchDecodeWithPagedKVCacheWrapper.plan() takes them once per batch, as a server plans once per
decode step for all its layers; only run() is timed. Tensor cores as
SGLang's FlashInfer backend chooses them (should_use_tensor_core: a GQA group of 4 or more in
bf16/fp16); the backend is FlashInfer's own `auto` (FA2/FA3 kernels JIT-built by the GPU
machine's nvcc; no trtllm-gen cubins are read on Hopper, so flashinfer-cubin is not staged).

0.6.15.post1 is the release that SGLang 0.5.17, the newest SGLang pinned to torch 2.11, pins:
a 15 MB wheel, where 0.7.2.post1 is 62 MB (two calls of staging to one).
"""

from __future__ import annotations

from typing import Any

import torch

from peers import Binder, Candidate, Prepared

WORKSPACE_BYTES = 128 << 20  # FlashInfer's recommended float workspace
TENSOR_CORES_FROM_GROUP = 4  # SGLang's should_use_tensor_core for 16-bit KV


def paged_indices(
    block_table: torch.Tensor, seq_lens: torch.Tensor, page: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(indptr, indices, last_page_len), int32 on the table's device: request b owns
    indices[indptr[b]:indptr[b+1]] = block_table[b, :ceil(n_b / page)] and its last page holds
    last_page_len[b] = n_b - page * (pages - 1) tokens (1 to page)."""
    lens = seq_lens.long()
    pages = (lens + page - 1) // page
    indptr = torch.zeros(len(lens) + 1, dtype=torch.int64, device=lens.device)
    indptr[1:] = torch.cumsum(pages, 0)
    live = torch.arange(block_table.shape[1], device=lens.device) < pages[:, None]
    indices = block_table[live]  # row-major: each request's pages in order
    last = lens - page * (pages - 1)
    return indptr.int(), indices.int(), last.int()


def _decode_wrapper() -> Binder:
    import flashinfer

    def bind(args: list[Any]) -> Prepared:
        q, k_cache, v_cache, block_table, seq_lens, scale = args
        _, page, kv_heads, head_dim = k_cache.shape
        heads = q.shape[1]
        indptr, indices, last = paged_indices(block_table, seq_lens, page)
        workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=q.device)
        wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            workspace,
            "NHD",
            use_tensor_cores=heads // kv_heads >= TENSOR_CORES_FROM_GROUP,
        )
        wrapper.plan(
            indptr,
            indices,
            last,
            heads,
            kv_heads,
            head_dim,
            page,
            q_data_type=q.dtype,
            kv_data_type=k_cache.dtype,
            sm_scale=float(scale),
        )
        # q contiguous, as a server's attention layer hands it over (a strided view of a fused
        # qkv is the kernelgen_ops contract, not FlashInfer's).
        return Prepared(lambda q, k, v: wrapper.run(q, (k, v)), [q.contiguous(), k_cache, v_cache])

    return bind


CANDIDATES: dict[str, list[Candidate]] = {
    "decode_attn": [
        (
            "flashinfer.BatchDecodeWithPagedKVCacheWrapper(NHD).plan(...) once, run(q, (k, v))",
            _decode_wrapper,
        ),
    ],
}
