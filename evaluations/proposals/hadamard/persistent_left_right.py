"""Hadamard transform on the tensor cores: the shipped kernel (evaluations/hadamard/
20261202-090420-agent-ef70, r03-c01) made persistent, its signs built once per program and
cheaper, and its two-factor path rid of both permutes.

What changed, and why (times are the shipped kernel's on the H200, graph-timed, L2 cold; the
copy ceiling is 4.27 TB/s, so 32 MiB moved is 7.9 us):
- 65536x128 bf16 (16 MiB in, 16 MiB out; 14.8 us, 53% of the ceiling, 0.73x torch.compile's
  10.8): 1024 programs of 64 rows each built H_128 (16K signs, 128 a thread at 4 warps, ~10
  integer ops and an int-to-float convert each: ~1 us of one SM's ALUs) for 16 KB of x, one
  load in flight per program and no overlap of one tile's load with the last one's dot and
  store. Now a persistent grid (2 programs an SM here, ~4 tiles each) builds its signs once
  and walks its tiles in a tl.range pipelined 3 deep, so two 16 KB tiles are in flight per
  program while a third is multiplied and stored. The dot is 256 flops an element (2.1 GFLOP,
  ~3 us of the tensor cores, hidden under the 7.9 us of bytes). Aim: 9-10 us, near 1.1x.
- 4096x4096 bf16 (32 MiB; 37.5 us, 22% of the ceiling): a row is a [64, 64] matrix M and
  y = H_64 M H_64. The shipped kernel took M @ H_64 first and then permuted the fp32 result
  through shared memory to [64, 64]^T for H_64, and permuted back to store. Now the left factor
  goes first, H_64 @ M (M, exact in bf16, as the B operand straight from its pipelined shared
  buffer), and the fp32 Y then in three bf16 pieces as the A operand of Y @ H_64: no permute,
  and the product lands in the load's own layout for the store. The flops stay 512 an element
  (8.6 GFLOP, ~11 us of bf16 tensor-core time at ~790 TFLOP/s), now the bound: aim 14-18 us,
  2-2.5x the shipped kernel, still short of the copy ceiling (see below).
- 4096x128 bf16 (2 MiB; 4.23 us vs eager's 3.59, launch-bound): 64 tiles, one a program. The
  signs are now a select of +-1 constants on a popcount parity folded to the width's bits (3
  shift-xors for 128, 4 for 4096 in the shipped kernel), no int-to-float convert; but they are
  built before the loop, so before the pipelined load rather than under it. Aim: about even,
  4.0-4.3 us; the dispatch table sends this shape to torch on host time anyway.
- Widths 256-2048 (no bench shape) keep D = D1 * D2 with D1 <= D2. Where D1 < 64 a tile holds
  64 // D1 rows and the left factor is block diagonal ([64, 64], H_D1 on its diagonal): a dot
  of M = 64 (the smallest wgmma) at 64 // D1 times the left factor's flops, for no permute.

Kept: exactness and contract. Every product with a +-1 sign is exact and summed in fp32: 16-bit
x goes into the first dot as it is (signs in its dtype), fp32 x and the fp32 intermediate as
three bf16 pieces (all 24 bits), as the shipped kernel does (two pieces failed an fp16 output
near 0 at atol 1e-5). Same signature, dtypes (fp32, fp16, bf16), any strides of x, rank up to
anything, widths powers of two >= 16, one rounding at the store, output contiguous.

fp32 x at D = 128 (no bench shape) compiles to 255 registers with ~160 bytes spilled for sm_90
(the tile, its three pieces and the accumulator); 8 warps or 32-row tiles spilled as much.

Given up, and why not more: 4096 wide stays on the tensor cores at 512 flops an element. The
three bf16 pieces of the intermediate are the cost (384 of the 512); three factors (16^3) would
cut it to 224 but need a permute or a batched dot per factor. A CUDA-core butterfly (12 adds an
element) is the memory-bound way, but Triton picks the register layout, and each stage whose
bit sits across lanes or warps becomes a shared-memory layout conversion of the whole tile.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _parity(bits, N: tl.constexpr):
    """Bit 0 of the xor of the low log2(N) bits of bits (N a power of two): the fold stops at
    the bits an index below N can have."""
    if N > 256:
        bits = bits ^ (bits >> 8)
    if N > 16:
        bits = bits ^ (bits >> 4)
    if N > 4:
        bits = bits ^ (bits >> 2)
    if N > 2:
        bits = bits ^ (bits >> 1)
    return bits & 1


@triton.jit
def _signs(N: tl.constexpr, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    """[N, N]: H_BLOCK (entries (-1)^popcount(i & j)) on the diagonal blocks, 0 elsewhere (BLOCK
    == N: H_N itself). A select of constants, so no integer-to-float convert per entry."""
    i = tl.arange(0, N)
    bits = i[:, None] & i[None, :]
    if BLOCK < N:
        bits = bits & (BLOCK - 1)
    s = tl.where(_parity(bits, BLOCK) == 0, 1.0, -1.0)
    if BLOCK < N:
        s = tl.where((i[:, None] // BLOCK) == (i[None, :] // BLOCK), s, 0.0)
    return s.to(DTYPE)


@triton.jit
def _pieces(v):
    """fp32 v as three bf16 pieces whose sum is v (8 + 8 + 8 bits)."""
    hi = v.to(tl.bfloat16)
    rest = v - hi.to(tl.float32)
    mid = rest.to(tl.bfloat16)
    lo = (rest - mid.to(tl.float32)).to(tl.bfloat16)
    return hi, mid, lo


@triton.jit
def _right(v, h, PIECES: tl.constexpr):
    """v @ h, h exact in its dtype: v as it is (PIECES == 0, 16-bit v of h's dtype), or fp32 v
    in three bf16 pieces, exact products summed in fp32."""
    if PIECES == 0:
        acc = tl.dot(v, h)
    else:
        hi, mid, lo = _pieces(v)
        acc = tl.dot(hi, h)
        acc = tl.dot(mid, h, acc)
        acc = tl.dot(lo, h, acc)
    return acc


@triton.jit
def _left(h, v, PIECES: tl.constexpr):
    """h @ v, as _right with the signs on the left."""
    if PIECES == 0:
        acc = tl.dot(h, v)
    else:
        hi, mid, lo = _pieces(v)
        acc = tl.dot(h, hi)
        acc = tl.dot(h, mid, acc)
        acc = tl.dot(h, lo, acc)
    return acc


@triton.jit
def _hadamard_kernel(
    y_ptr,  # *T, [rows, D], contiguous
    x_ptr,  # *T, [rows, D], any strides
    rows,
    n_tiles,  # cdiv(rows, TILE // D1)
    scale,  # D^-0.5
    stride_xm,
    stride_xn,
    stride_ym,
    D1: tl.constexpr,  # D = D1 * D2, powers of two; D1 = 1 (one dot) or D1 >= 16
    D2: tl.constexpr,
    TILE: tl.constexpr,  # tile rows: TILE // D1 rows of x, each as D1 rows of D2; >= 16
    IN_PIECES: tl.constexpr,  # 0: x's own dtype in the first dot; 3: fp32 x in bf16 pieces
    NUM_STAGES: tl.constexpr,  # tiles in flight per program (tl.range's pipelining)
):
    if IN_PIECES == 0:
        in_ty: tl.constexpr = x_ptr.dtype.element_ty
    else:
        in_ty: tl.constexpr = tl.bfloat16
    # Built once per program: the persistent loop below reuses them for every tile.
    if D1 == 1:
        h_right = _signs(D2, D2, in_ty)
    else:
        h_left = _signs(TILE, D1, in_ty)
        h_right = _signs(D2, D2, tl.bfloat16)
    t = tl.arange(0, TILE)
    col = (t % D1)[:, None] * D2 + tl.arange(0, D2)[None, :]
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0), num_stages=NUM_STAGES):
        r = (tile * (TILE // D1) + t // D1).to(tl.int64)
        ok = (r < rows)[:, None]
        x = tl.load(x_ptr + r[:, None] * stride_xm + col * stride_xn, mask=ok, other=0.0)
        if IN_PIECES != 0:
            x = x.to(tl.float32)
        if D1 == 1:
            z = _right(x, h_right, IN_PIECES)
        else:
            # H_D1 M H_D2 with the left factor first: the fp32 intermediate then feeds the
            # second dot as its A operand, and the product keeps the load's layout.
            z = _right(_left(h_left, x, IN_PIECES), h_right, 3)
        out = (z * scale).to(y_ptr.dtype.element_ty)
        tl.store(y_ptr + r[:, None] * stride_ym + col, out, mask=ok)


def _split(d: int) -> tuple[int, int]:
    """D = D1 * D2 with both >= 16 (tl.dot's least), D1 = 1 where D <= 128."""
    if d <= 128:
        return 1, d
    d1 = 1 << (d.bit_length() - 1) // 2
    return d1, d // d1


def hadamard(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1]
    x2 = x.reshape(-1, d)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    d1, d2 = _split(d)
    if d1 == 1:
        # 8K elements a tile (16 KB in 16 bits), fewer rows where x has fewer: dot M >= 16.
        tile = min(8192 // d2, max(16, triton.next_power_of_2(n_rows)))
        per_tile = tile
    else:
        # At least 64 tile rows (wgmma's M): 64 // D1 rows of x where D1 < 64.
        tile = max(64, d1)
        per_tile = tile // d1
    n_tiles = triton.cdiv(n_rows, per_tile)
    # Programs an SM, by shared memory (signs and three stages of tiles, sm_90 compile): 90 KB
    # at D = 128 in 16 bits, two fit; 48 KB at D = 4096, four fit (108 registers), to hide the
    # four dependent dots of a tile behind the other programs'.
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    grid = (min(n_tiles, (2 if d1 == 1 else 4) * sms),)
    wide = x.dtype == torch.float32
    _hadamard_kernel[grid](
        y, x2, n_rows, n_tiles, d**-0.5, x2.stride(0), x2.stride(1), y.stride(0),
        D1=d1, D2=d2, TILE=tile, IN_PIECES=3 if wide else 0,
        NUM_STAGES=3, num_warps=4,
    )  # fmt: skip
    return y.view(x.shape)
