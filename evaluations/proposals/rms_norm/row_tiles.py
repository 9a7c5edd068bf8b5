"""RMSNorm over the last dimension: narrow rows several to a program, wide rows one.

What changed from the shipped kernel, and why. The shipped kernel runs one program per row. At
Qwen3's q/k norm (4096 tokens x 32 heads = 131072 rows of 128, bf16) that is 131072 programs
of 256 bytes each: on an H100 (library bench, 2026-12-07) it took 80.9 us, as slow as eager,
where QuACK, Liger and torch.compile took 24.2-24.8 (67 MB at about 2.7 TB/s). Each program's
scheduling and its one reduction cost more than its load.

Here a program takes ROWS rows at once, ROWS * BLOCK_SIZE about 4096 elements: 32 rows of 128
per program at that shape (4096 programs), one row per program from 4096 columns on, as
before. The tile is [ROWS, BLOCK_SIZE], each row's mean square a reduction along the tile's
second axis, the weight loaded once per program and shared by its rows. ROWS = 1 runs the
shipped kernel's 1-D code unchanged, so the hidden widths keep their code. (A first version put
wide rows through the same 2-D tile as [1, BLOCK_SIZE]; a quick triton.testing.do_bench on an
H100, host launch included, gave 21.1 us at 64x7168 against the shipped kernel's 11.7, too
coarse at a launch-bound shape to say why, and not worth the risk.) The same quick timing at
131072x128: 29.7 us against the shipped 84.2 and eager's 86.1; the pipeline's own bench of the
shipped kernel there, in run 20261207-084752-agent-eeae (H100), is 84.4 us.

Math is the shipped kernel's: squares summed in fp32, y = x * (1 / sqrt(mean + eps)) * w,
stored in x's dtype. Row offsets are int64 (the limit case has 262208 rows of 8192). Any
strides of x are honoured; y is contiguous.
"""

import functools
import math

import torch
import triton
import triton.language as tl

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<rows>x<cols>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"num_warps": [2, 4, 8, 16, 32]}
DEFAULT_CONFIG = {"num_warps": 4}
TUNED: dict[str, dict[str, int]] = {'16384x8192': {'num_warps': 4},
 '1x4096': {'num_warps': 16},
 '4096x4096': {'num_warps': 8},
 '64x8192': {'num_warps': 16},
 '8x8192': {'num_warps': 16}}

# Elements a program holds at once when rows are narrow: 32 rows of 128, 8 of 512.
TILE = 4096


@triton.jit
def _rms_norm_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    w_ptr,  # *T, [n_cols], contiguous
    n_rows,  # rows of x
    n_cols,  # row length
    eps,  # added to the mean square before the rsqrt
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    ROWS: tl.constexpr,  # rows per program, a power of two
    BLOCK_SIZE: tl.constexpr,  # power of two >= n_cols
):
    cols = tl.arange(0, BLOCK_SIZE)
    cmask = cols < n_cols
    if ROWS == 1:
        # The shipped kernel's 1-D code, as it was: a [1, BLOCK_SIZE] tile of a wide row can
        # be laid out with warps along its unit axis.
        row = tl.program_id(0).to(tl.int64)
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cmask, other=0.0).to(
            tl.float32
        )
        w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        tl.store(y_ptr + row * stride_ym + cols, (x * inv * w).to(y_ptr.dtype.element_ty),
                 mask=cmask)
    else:
        rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
        mask = (rows < n_rows)[:, None] & cmask[None, :]
        x = tl.load(
            x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask, other=0.0
        ).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / n_cols + eps)
        y = x * inv[:, None] * w[None, :]
        tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :],
                 y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        block = triton.next_power_of_2(n_cols)
        rows = max(1, min(TILE // block, triton.next_power_of_2(n_rows)))
        _rms_norm_kernel[(triton.cdiv(n_rows, rows),)](
            y, x2, w, n_rows, n_cols, eps, x2.stride(0), x2.stride(1), y.stride(0),
            ROWS=rows, BLOCK_SIZE=block, **_config(n_rows, n_cols),
        )
    return y.view(x.shape)
