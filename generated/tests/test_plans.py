"""Launch plans (_plans.py): a replay makes the launches the launcher would make, with this call's
pointers, and every call a plan cannot stand for runs the launcher.

On CPU against test_launch's pretend GPU: Triton binds, specializes and keeps kernels for real,
and the stand-in compiled kernels record the arguments of every launch, lean or replayed.
"""

import importlib
import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from test_launch import (
    OPS,
    Pretend,
    _inputs,
    _launcher_with_pretend_kernels,
    _scale_kernel,
    raw_launcher,
)
from triton import knobs

from kernelgen_ops import _launch, _plans

pytestmark = pytest.mark.skipif(not _launch.ACTIVE, reason="lean launches are off on this Triton")


@pytest.fixture(autouse=True)
def _plans_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_launch, "_enabled", True)
    monkeypatch.setattr(_plans, "_enabled", True)


def _copy(args: tuple) -> tuple:
    """The same key (shapes, strides, dtypes, alignment), other storage."""

    def fresh(a: Any) -> Any:
        if not isinstance(a, torch.Tensor):
            return a
        out = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype)
        return out.copy_(a)

    return tuple(fresh(a) for a in args)


def _where(p: int, tensors: list[torch.Tensor]) -> tuple:
    for i, t in enumerate(tensors):
        if t.numel() and t.data_ptr() <= p < t.data_ptr() + t.untyped_storage().nbytes():
            return (i, p - t.data_ptr())
    return ("scratch",)  # a buffer the launcher allocated and did not return


def _normalized(launches: list[tuple], tensors: list[torch.Tensor]) -> list[tuple]:
    """Each launch's arguments with pointers (ints, or tensors' data_ptr) as (tensor, offset)."""
    out = []
    for launch in launches:
        grid, rest = launch[:3], launch[9:]
        norm = []
        for a in rest:
            if isinstance(a, torch.Tensor):
                a = a.data_ptr()
            norm.append(_where(a, tensors) if isinstance(a, int) and a > 1 << 20 else a)
        out.append((grid, tuple(norm)))
    return out


def _leaves(out: Any) -> list[torch.Tensor]:
    return [out] if isinstance(out, torch.Tensor) else list(out)


def replays_like_lean(pretend: Pretend, launcher: Any, replaying: Any, args: tuple) -> tuple:
    """Call `replaying` once (its plan recorded, the kernels compiled and kept), then on a copy
    of the arguments (same key, other storage): it must launch what the launcher launches, the
    same grids and arguments with pointers at the same offsets into the same tensors, and never
    through Triton's path. Returns (its output, the launcher's, the copy's tensors)."""
    replaying(*args)
    again = _copy(args)
    pretend.launches.clear()
    want = launcher(*again)
    tensors = [a for a in again if isinstance(a, torch.Tensor)]
    lean = _normalized(pretend.launches, [*tensors, *_leaves(want)])
    runs = pretend.triton_runs
    pretend.launches.clear()
    got = replaying(*again)
    assert pretend.triton_runs == runs
    assert _normalized(pretend.launches, [*tensors, *_leaves(got)]) == lean
    return got, want, tensors


@pytest.mark.parametrize("op", OPS)
def test_a_replay_launches_what_the_lean_path_launches(op: str, pretend, monkeypatch) -> None:
    module = importlib.import_module(f"kernelgen_ops.{op}")
    launcher = _launcher_with_pretend_kernels(op, pretend, monkeypatch)
    planned = _plans.Planned(launcher, vars(module))
    for args in _inputs(op):
        got, want, tensors = replays_like_lean(pretend, launcher, planned, args)
        for g, w in zip(_leaves(got), _leaves(want), strict=True):
            assert (g.shape, g.stride(), g.dtype) == (w.shape, w.stride(), w.dtype)
            assert not any(g.data_ptr() == a.data_ptr() for a in tensors)
    # Planned unless the launcher's reshape of x has to copy (x's rows cannot be viewed flat):
    # that copy is a torch op the replay would not make.
    copies = {_plans.key(args) for args in _inputs(op) if _reshape_copies(args[0])}
    assert copies != set(planned._plans)
    for key, plan in planned._plans.items():
        assert (plan is None) == (key in copies), key


def _reshape_copies(x: torch.Tensor) -> bool:
    return not x.reshape(-1, x.shape[-1])._is_view()


def _namespace(pretend: Pretend, body: Any) -> dict[str, Any]:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    calls = []

    def op(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return body(kernel, x)

    return {"__name__": "kernelgen_ops.op", "op": op, "_k": kernel, "calls": calls}


def _scale(kernel: Any, x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    kernel[(4,)](y, x, x.numel(), x.stride(0), 0.5, True, BLOCK=64)
    return y


def test_a_call_with_another_torch_op_is_never_replayed(pretend: Pretend) -> None:
    def zeroed(kernel: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x).zero_()  # an allocation, then a fill the replay would not make
        kernel[(4,)](y, x, x.numel(), x.stride(0), 0.5, True, BLOCK=64)
        return y

    ns = _namespace(pretend, zeroed)
    planned = _plans.Planned(ns["op"], ns)
    x = torch.randn(64)
    for _ in range(3):
        planned(x)
    assert list(planned._plans.values()) == [None] and len(ns["calls"]) == 3


def test_each_key_gets_its_own_plan(pretend: Pretend) -> None:
    ns = _namespace(pretend, _scale)
    planned = _plans.Planned(ns["op"], ns)
    x = torch.randn(64, 2)
    for t in (x, x[:, 0], x[:, 1], torch.randn(64), torch.randn(32), x.half()):
        planned(t)
        planned(_copy((t,))[0])
    # (64, 2) rows, a strided column, the same column 4 bytes on (another alignment), a
    # contiguous row, a shorter one, another dtype: six plans, each recorded once.
    assert len(planned._plans) == 6 and len(ns["calls"]) == 6


def test_hooks_and_switches_run_the_launcher(pretend: Pretend, monkeypatch) -> None:
    ns = _namespace(pretend, _scale)
    planned = _plans.Planned(ns["op"], ns)
    x = torch.randn(64)
    planned(x)
    planned(x)
    assert len(ns["calls"]) == 1
    seen: list[Any] = []
    knobs.runtime.launch_enter_hook.add(seen.append)
    try:
        planned(x)
    finally:
        knobs.runtime.launch_enter_hook.remove(seen.append)
    _launch.set_enabled(False)
    try:
        planned(x)
    finally:
        _launch.set_enabled(True)
    _plans.set_enabled(False)
    planned(x)
    assert len(ns["calls"]) == 4


def test_a_view_of_an_allocation_is_returned_as_that_view(pretend: Pretend) -> None:
    def flat(kernel: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty(x.numel() + 8, dtype=x.dtype)
        kernel[(4,)](y[8:], x, x.numel(), 1, 0.5, True, BLOCK=64)
        return y[8:].view(x.shape)

    ns = _namespace(pretend, flat)
    planned = _plans.Planned(ns["op"], ns)
    x = torch.randn(4, 16)
    planned(x)
    pretend.launches.clear()
    out = planned(x)
    assert len(ns["calls"]) == 1
    assert out.shape == (4, 16) and out.storage_offset() == 8
    assert pretend.launches[0][9] == out.data_ptr()  # the kernel wrote where the view starts


def test_an_allocation_with_an_input_s_layout_is_made_with_empty_like() -> None:
    x, padded = torch.randn(4, 8), torch.randn(4, 9)[:, 1:]
    assert _plans._alike(torch.empty(4, 8), [padded, x]) == 1
    assert _plans._alike(torch.empty(4, 8), [padded]) is None
    assert _plans._alike(torch.empty(4, 8, dtype=torch.float16), [x]) is None
    # empty_like of a view with gaps is dense: a buffer with the view's strides is not its like.
    assert _plans._alike(torch.empty_strided((4, 8), (9, 1)), [padded]) is None


def test_a_replay_allocates_like_an_input_where_the_launcher_did(pretend: Pretend) -> None:
    def same(kernel: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty(x.shape, dtype=x.dtype)
        kernel[(4,)](y, x, x.numel(), 1, 0.5, True, BLOCK=64)
        return y

    ns = _namespace(pretend, same)
    planned = _plans.Planned(ns["op"], ns)
    dense, padded = torch.randn(4, 16), torch.randn(4, 17)[:, 1:]
    for x in (dense, padded):
        planned(x)
        out = planned(x)
        assert (out.shape, out.stride()) == ((4, 16), (16, 1))
    sources = [planned._plans[_plans.key((x,))].source for x in (dense, padded)]
    assert "_like(s0)" in sources[0] and "_like" not in sources[1]
    assert "_empty(" in sources[1]


def _cuda_launcher(scratch: int) -> tuple[Any, list[tuple]]:
    """Triton's CudaLauncher, not compiled: its C launch function records what it is handed."""
    from triton.backends.nvidia.driver import CudaLauncher

    launcher = object.__new__(CudaLauncher)
    handed: list[tuple] = []
    launcher.launch = lambda *a: handed.append(a)
    launcher.num_ctas = 1
    launcher.global_scratch_size, launcher.global_scratch_align = scratch, 128
    launcher.profile_scratch_size, launcher.profile_scratch_align = 0, 1
    launcher.launch_cooperative_grid, launcher.launch_pdl = False, True
    return launcher, handed


def _one_launch_plan(run: Any, x: torch.Tensor) -> _plans._Plan:
    """y = kernel(y, x + 32 bytes, 8, 3.0) on a (4,) grid, y allocated like x."""
    entry = (None, run, 7, (4, 1, 0))  # (kernel, run, function handle, packed metadata)
    jit = SimpleNamespace(pre_run_hooks=[], used_global_vals={})  # what a replay asks of it
    launch = _plans._Launch(jit, entry, (4,), [None, None, 8, 3.0], ((0, 1, 0), (1, 0, 32)))
    allocation = (tuple(x.shape), x.stride(), x.dtype, x.device, None)
    return _plans._Plan((0,), [allocation], [launch], [(1, None, None, 0)], torch.Tensor)


def test_a_replay_hands_triton_s_c_launch_what_its_launcher_would(pretend: Pretend) -> None:
    launcher, handed = _cuda_launcher(scratch=0)
    x = torch.randn(4, 8)
    plan = _one_launch_plan(launcher, x)
    out = plan.go((x,))
    assert "c0, p0" in plan.source  # the C function itself, with the launcher's two flags
    # What CudaLauncher.__call__ hands the same C function for the same launch.
    launcher(
        4, 1, 1, 1000, 7, (4, 1, 0), None, None, None, out.data_ptr(), x.data_ptr() + 32, 8, 3.0
    )
    replayed, through_call = handed
    assert replayed == through_call
    assert out.shape == x.shape and out.data_ptr() != x.data_ptr()


def test_a_kernel_that_needs_scratch_memory_is_replayed_through_its_launcher(
    pretend: Pretend,
) -> None:
    from triton.runtime import _allocation

    launcher, handed = _cuda_launcher(scratch=64)
    plan = _one_launch_plan(launcher, torch.randn(4, 8))
    assert "c0" not in plan.source
    asked: list[tuple] = []
    # Triton's allocator for this test alone (torch sets one of its own in some processes).
    token = _allocation._allocator.set(
        lambda size, align, stream: asked.append((size, align)) or 99
    )
    try:
        plan.go((torch.randn(4, 8),))
    finally:
        _allocation._allocator.reset(token)
    # CudaLauncher.__call__ asked for the scratch of 4 programs and handed it on.
    assert asked == [(4 * 64, 128)]
    (call,) = handed  # (grid, stream, function, flags, the two scratch buffers, metadata, ...)
    assert call[7:10] == (99, None, (4, 1, 0))


def test_off_installs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_plans, "_enabled", False)
    ns = {"__name__": "kernelgen_ops.softmax", "softmax": lambda x: x}
    _plans.install(ns)
    assert not isinstance(ns["softmax"], _plans.Planned)


def test_on_unless_switched_off_at_import() -> None:
    code = "from kernelgen_ops import _plans; print(_plans.enabled())"
    env = {k: v for k, v in os.environ.items() if k != "KERNELGEN_OPS_PLANS"}
    for value, want in ((None, "True"), ("0", "False"), ("1", "True")):
        run_env = env if value is None else {**env, "KERNELGEN_OPS_PLANS": value}
        out = subprocess.run(
            [sys.executable, "-c", code], env=run_env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == want, (value, out.stderr[-500:])


def _cuda_copy(args: tuple) -> tuple:
    return tuple(
        torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device).copy_(a)
        if isinstance(a, torch.Tensor)
        else a
        for a in args
    )


@pytest.mark.gpu
@pytest.mark.parametrize("op", OPS)
def test_replays_compute_what_the_launcher_computes(op: str) -> None:
    """On a GPU: each replay's output equals the launcher's bit for bit, on padded, misaligned and
    dense inputs, and a replay captured in a CUDA graph computes the same."""
    from test_launch import _gpu_inputs

    module = importlib.import_module(f"kernelgen_ops.{op}")
    planned = _plans.Planned(raw_launcher(module, op), vars(module))
    launcher = planned.__wrapped__
    for args in _gpu_inputs(op, torch.bfloat16):
        planned(*args)  # recorded
        again = _cuda_copy(args)
        got, want = planned(*again), launcher(*again)
        assert torch.equal(got, want), f"{op} {tuple(args[0].shape)} {args[0].stride()}"
    assert any(plan is not None for plan in planned._plans.values())
    args = _gpu_inputs(op, torch.bfloat16)[0]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        planned(*args)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = planned(*args)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, launcher(*args))
