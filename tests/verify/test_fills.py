"""The fills of a judged call: drawn per call from the run's seed among several families, each of
which shows an output the kernel never wrote (a NaN check alone would miss a large finite one),
and on CUDA the small allocator pool flooded as well as the large one."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from kernelgen.spec import Tolerance
from kernelgen.verify import checks, fills, guard, verify_candidate
from kernelgen.verify.verdict import Judging

FILLS = Path(__file__).parent / "candidates" / "fills"
TOL = Tolerance(rtol=1.3e-6, atol=1e-5)


def _families(seed: int, calls: int = 24) -> list[str]:
    """The fills the judge asks for, call after call, in a run of this seed: half the calls
    poisoned, half randomly filled (as a case's four calls are)."""
    judging = Judging.__new__(Judging)
    judging.ev = SimpleNamespace(rng=random.Random(seed), folder=Path("out"))
    judging.device, judging.calls, judging.spaces = "cpu", 0, []
    truth = SimpleNamespace(variants={"a": SimpleNamespace(file=Path("a.pt"))})
    steps = [
        judging.step(None, truth, "a", fill="poison" if i % 2 else "random")  # type: ignore[arg-type]
        for i in range(calls)
    ]
    return [f"{s.request.fill}:{s.request.fill_seed}" for s in steps]


def test_the_family_is_drawn_per_call_from_the_runs_seed() -> None:
    one, other = _families(1), _families(2)
    assert one == _families(1)  # the same seed, the same fills: --seed reproduces a failure
    assert one != other
    for drawn in (one, other):
        poisons = {f.split(":")[0] for f in drawn[1::2]}
        assert poisons == set(fills.POISONS), poisons  # every family, not one per run
        assert {f.split(":")[0] for f in drawn[0::2]} == {"random"}
        assert len({f.split(":")[1] for f in drawn}) == len(drawn)  # values drawn per call


@pytest.mark.parametrize("family", fills.POISONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_an_unwritten_output_is_caught_whatever_the_family(family: str, dtype) -> None:
    ref = torch.randn(64, 100, dtype=torch.float64)
    for seed in range(3):
        with guard.guarded(family, seed=seed):
            out = torch.empty(64, 100, dtype=dtype)  # what the launcher allocates
        # ... and the kernel never writes.
        fail, _, _ = checks.measure(out, ref, TOL)
        assert fail is not None and fail.category == "incorrect", (family, seed)
        if family == "large":
            assert not bool(out.isnan().any())  # a NaN check alone would pass it


def test_the_random_fill_is_finite_and_not_one_distribution() -> None:
    scales, zeros = set(), 0
    for seed in range(12):
        with guard.guarded("random", seed=seed):
            out = torch.empty(1000, dtype=torch.float16)
        assert bool(out.isfinite().all())
        zeros += int(bool((out == 0).all()))
        scales.add(round(float(out.float().abs().max()), 1))
    assert zeros and len(scales) > 3  # zeros, and values of many scales: no U(-3, 3) to spot


def test_e4m3_outputs_are_poisoned_too() -> None:
    """e4m3 has no infinity (a cast of one saturates to 448): an `inf` fill is NaN there."""
    for family in fills.POISONS:
        with guard.guarded(family, seed=3):
            q = torch.empty(256, dtype=torch.float8_e4m3fn)
        v = q.double()
        assert bool(((~v.isfinite()) | (v.abs() >= 2)).all()), family


@pytest.mark.parametrize("family", ["nan", "large", "bits"])
def test_freed_memory_reads_as_its_family_in_every_format(family: str) -> None:
    """Freed device memory has no dtype: the flood's bytes poison every float format."""
    raw = torch.empty(4096, dtype=torch.uint8)
    fills._bytes(raw, family, fills.Draw(family, 5))
    for dtype in (torch.float64, torch.float32, torch.bfloat16, torch.float16):
        v = raw.view(dtype).double()
        assert bool(((~v.isfinite()) | (v.abs() >= 2)).all()), (family, dtype)
    e4m3 = raw.view(torch.float8_e4m3fn).double()
    assert bool(((~e4m3.isfinite()) | (e4m3.abs() >= 2)).all()), family
    if family == "large":
        assert bool(raw.view(torch.float32).isfinite().all())


def _best_fit(free: list[int], request: int) -> list[int] | None:
    """The CUDA caching allocator's small pool: the smallest free block that holds the request,
    split when at least 512 bytes are left over; None where it would need a new segment."""
    fits = [b for b in free if b >= request]
    if not fits:
        return None
    block = min(fits)
    rest = list(free)
    rest.remove(block)
    if block - request >= 512:
        rest.append(block - request)
    return rest


def test_the_small_pool_flood_retakes_every_free_block() -> None:
    """Requests of `small_parts`, largest first, take all the free bytes of the small pool and
    never a new segment, whatever the blocks: small scratch buffers and outputs come from
    there, and on CUDA the flood once refilled only the large pool."""
    rng = random.Random(0)
    for _ in range(300):
        free = [512 * rng.randint(1, 4096) for _ in range(rng.randint(1, 12))]  # up to 2 MiB
        left: list[int] | None = list(free)
        for part in fills.small_parts(free):
            assert part <= fills.SMALL_REQUEST
            assert left is not None
            left = _best_fit(left, part)
            assert left is not None, (free, part)
        assert left == [], (free, left)


def test_the_flood_takes_and_fills_every_free_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flood's plan, with the allocator's answers stubbed (no GPU here): a fresh large block,
    then every free block of the large pool whole, then the small pool's in parts of at most
    1 MiB, each filled with the family and given back."""
    taken: list[torch.Tensor] = []

    def take(nbytes: int) -> torch.Tensor:
        taken.append(torch.full((nbytes,), 7, dtype=torch.uint8))  # stale bytes
        return taken[-1]

    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (8 << 30, 80 << 30))
    monkeypatch.setattr(fills, "_free_blocks", lambda: ([4096, 2 << 20, 1536 << 10], [3 << 20]))
    monkeypatch.setattr(fills, "_take", take)
    fills.flood("cuda", "large", seed=1, megabytes=1)
    assert [t.numel() for t in taken] == [1 << 20, 3 << 20] + [1 << 20] * 3 + [512 << 10, 4096]
    for t in taken:
        v = t.view(torch.float32)
        assert bool(v.isfinite().all()) and bool((v.abs() > 1e30).all())


def test_a_kernel_that_knows_the_old_fills_is_rejected() -> None:
    """It computes a block only where its output reads NaN or lies in [-3, 3]. Accepted on CUDA
    while the fills were fixed (there the random fill refilled the freed memory; on the CPU the
    unguarded call's fresh memory happened to differ)."""
    v = verify_candidate(
        "silu_and_mul", FILLS / "silu_and_mul_known_fills.py", device="cpu", seed=5
    )
    assert not v.accepted and v.category in {"incorrect", "stale"}, v.reason


@pytest.mark.slow
def test_its_honest_twin_is_accepted() -> None:
    v = verify_candidate(
        "silu_and_mul", FILLS / "silu_and_mul_reads_output.py", device="cpu", seed=5
    )
    assert v.accepted, v.reason


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("family", [*fills.POISONS, "random"])
def test_the_flood_reaches_the_small_pool(family: str) -> None:
    """A small buffer freed with a result in it, then the flood: the next buffer of its size
    (the same block, from the small pool) holds the family, not the result."""
    for n in (1000, 200_000, 3_000_000):  # 4 KB and 800 KB (small pool), 12 MB (large)
        kept = torch.full((n,), 7.0, device="cuda")
        del kept
        guard.flood_free_memory("cuda", family, seed=n)
        again = torch.empty(n, device="cuda")
        assert not bool((again == 7.0).any()), (family, n)
        if family != "random":
            v = again.double()
            assert bool(((~v.isfinite()) | (v.abs() >= 2)).all()), (family, n)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_kernel_that_knows_the_old_fills_is_rejected_on_cuda() -> None:
    """Where it was accepted: freed memory refilled with U(-3, 3) before the unguarded call."""
    known = verify_candidate(
        "silu_and_mul", FILLS / "silu_and_mul_known_fills.py", device="cuda", seed=5
    )
    assert not known.accepted and known.category in {"incorrect", "stale"}, known.reason
    twin = verify_candidate(
        "silu_and_mul", FILLS / "silu_and_mul_reads_output.py", device="cuda", seed=5
    )
    assert twin.accepted, twin.reason
