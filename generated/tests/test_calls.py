"""The public call (_calls.py): a repeat call with the same key gets the answer the full call
gave, without the contract check, the dims or the dispatch table; whatever the key does not hold
takes the full path again.

On CPU: the contract's functions are replaced by counting ones (the real check accepts CUDA
tensors only), and the plan test runs against test_launch's pretend GPU.
"""

import importlib
import sys
from typing import Any

import pytest
import torch
from test_launch import _inputs, _launcher_with_pretend_kernels
from test_plans import replays_like_lean

import kernelgen_ops
from kernelgen_ops import _calls, _contracts, _launch, _plans

CALL = kernelgen_ops._softmax_call


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch):
    """softmax's check and dims, counted; the check refuses what the real one refuses that a CPU
    test can make (a gradient wanted, a negated view, a width of 7)."""
    counts = {"check": 0, "dims": 0}
    dims = _contracts.dims_softmax

    def check(x: torch.Tensor) -> None:
        counts["check"] += 1
        if x.requires_grad and torch.is_grad_enabled():
            raise ValueError("x wants a gradient")
        if x.is_neg() or x.shape[-1] == 7:
            raise ValueError("refused")

    def counted_dims(x: torch.Tensor) -> tuple[int, ...]:
        counts["dims"] += 1
        return dims(x)

    monkeypatch.setattr(_contracts, "check_softmax", check)
    monkeypatch.setattr(_contracts, "dims_softmax", counted_dims)
    CALL.forget()
    yield counts
    CALL.forget()
    kernelgen_ops.set_dispatch("measured")


def test_a_repeat_call_skips_the_check_and_the_table(counted: dict[str, int]) -> None:
    kernelgen_ops.set_dispatch("torch")
    x = torch.randn(4, 33)
    torch.testing.assert_close(kernelgen_ops.softmax(x), torch.softmax(x, -1), rtol=0, atol=0)
    again = torch.randn(4, 33)  # other storage, the same key
    torch.testing.assert_close(
        kernelgen_ops.softmax(again), torch.softmax(again, -1), rtol=0, atol=0
    )
    assert counted == {"check": 1, "dims": 1}
    kernelgen_ops.softmax(torch.randn(4, 34))  # another shape: another key
    kernelgen_ops.softmax(torch.randn(4, 66)[:, ::2])  # another stride
    assert counted == {"check": 3, "dims": 3}


def test_a_repeat_call_runs_only_the_generated_path(counted: dict[str, int]) -> None:
    """A hit is the generated function and what it kept (torch's op here): no frame of Call,
    of the contract or of the key builders runs."""
    kernelgen_ops.set_dispatch("torch")
    x = torch.randn(3, 20)
    kernelgen_ops.softmax(x)
    assert CALL.fast is not CALL and "answers.get(key)" in CALL.fast.source
    frames: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            frames.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    sys.setprofile(watch)
    try:
        kernelgen_ops.softmax(x)
    finally:
        sys.setprofile(None)
    ours = [f for f in frames if "kernelgen_ops" in f and "__init__.py:softmax" not in f]
    assert ours == ["<kernelgen_ops softmax call>:softmax", f"{_contracts.__file__}:torch_softmax"]
    assert counted == {"check": 1, "dims": 1}


def test_a_scalars_type_is_in_the_key(monkeypatch: pytest.MonkeyPatch, device: str) -> None:
    """rms_norm's eps as an int and as a float: one generated function (tensor, tensor, scalar),
    two keys that never mix (1 and 1.0 are equal in Python); a call of no pattern takes the full
    path."""
    call = kernelgen_ops._rms_norm_call
    call.forget()
    monkeypatch.setattr(call, "_patterns", {})
    monkeypatch.setattr(call, "fast", call)
    kernelgen_ops.set_dispatch("torch")
    x, w = torch.randn(2, 16, device=device), torch.randn(16, device=device)
    try:
        for eps in (1.0, 1, 1.0, 1):
            want = torch.nn.functional.rms_norm(x, (16,), w, eps)
            torch.testing.assert_close(call.fast(x, w, eps), want, rtol=0, atol=0)
            torch.testing.assert_close(call(x, w, eps), want, rtol=0, atol=0)
        assert sorted(call._patterns) == ["TTS"] and len(call._answers) == 2
        assert call.fast is call._patterns["TTS"]
        # A list where a tensor goes is no pattern: the full path, which refuses it.
        with pytest.raises(TypeError, match="must be a tensor"):
            call.fast([1.0], w, 1e-6)
    finally:
        call.forget()
        kernelgen_ops.set_dispatch("measured")


def test_with_several_devices_the_current_one_is_in_the_key(
    counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan launches on the device that was current when it was made: where the process sees
    more than one, the same tensors with another current device are another key."""
    monkeypatch.setattr(_launch, "one_device", lambda: False)
    monkeypatch.setattr(CALL, "_patterns", {})
    monkeypatch.setattr(CALL, "fast", CALL)
    kernelgen_ops.set_dispatch("torch")
    x = torch.randn(2, 24)
    for index in (0, 1, 0, 1):
        monkeypatch.setattr(_launch, "_current_device", lambda index=index: index)
        kernelgen_ops.softmax(x)
    assert "_launch._current_device()" in CALL.fast.source
    assert counted == {"check": 2, "dims": 2} and len(CALL._answers) == 2


def test_a_call_that_fails_its_check_fails_every_time(counted: dict[str, int]) -> None:
    kernelgen_ops.set_dispatch("torch")
    for _ in range(3):
        with pytest.raises(ValueError, match="refused"):
            kernelgen_ops.softmax(torch.randn(3, 7))
    assert counted["check"] == 3 and not CALL._answers


def test_grad_and_negated_views_are_in_the_key(counted: dict[str, int]) -> None:
    kernelgen_ops.set_dispatch("torch")
    x = torch.randn(2, 40)
    kernelgen_ops.softmax(x)
    with pytest.raises(ValueError, match="gradient"):
        kernelgen_ops.softmax(x.clone().requires_grad_())
    with torch.no_grad():
        kernelgen_ops.softmax(x.clone().requires_grad_())
    with pytest.raises(ValueError, match="refused"):
        kernelgen_ops.softmax(torch._neg_view(x))
    assert counted["check"] == 4


def test_the_mode_and_the_launcher_are_part_of_the_answer(
    counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = sys.modules["kernelgen_ops.softmax"]
    x = torch.randn(5, 50)
    kernelgen_ops.set_dispatch("torch")
    kernelgen_ops.softmax(x)
    monkeypatch.setattr(module, "softmax", lambda x: "first")
    kernelgen_ops.set_dispatch("kernel")
    assert kernelgen_ops.softmax(x) == "first"
    assert kernelgen_ops.softmax(x) == "first"
    monkeypatch.setattr(module, "softmax", lambda x: "second")
    assert kernelgen_ops.softmax(x) == "second"
    kernelgen_ops.set_dispatch("torch")
    assert isinstance(kernelgen_ops.softmax(x), torch.Tensor)
    # torch, kernel (then one repeat), the second launcher, torch again
    assert counted["check"] == 4


def test_a_tensor_subclass_is_never_keyed(counted: dict[str, int]) -> None:
    class Sub(torch.Tensor):
        pass

    kernelgen_ops.set_dispatch("torch")
    x = torch.randn(2, 9).as_subclass(Sub)
    kernelgen_ops.softmax(x)
    kernelgen_ops.softmax(x)
    assert counted["check"] == 2 and not CALL._answers


@pytest.mark.skipif(not _launch.ACTIVE, reason="lean launches are off on this Triton")
@pytest.mark.parametrize("op", ["softmax", "rms_norm", "silu_and_mul"])
def test_a_repeat_call_replays_what_the_lean_path_launches(
    op: str, pretend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The public call end to end: checked once per key, then replayed from the plan of its
    first call; the launches are those the launcher makes (same grids, arguments, pointers at
    the same offsets into the same tensors)."""
    monkeypatch.setattr(_launch, "_enabled", True)
    monkeypatch.setattr(_plans, "_enabled", True)
    monkeypatch.setattr(_contracts, f"check_{op}", lambda *a: None)  # CPU tensors allowed
    call: _calls.Call = getattr(kernelgen_ops, f"_{op}_call")
    call.forget()
    kernelgen_ops.set_dispatch("kernel")
    try:
        launcher = _launcher_with_pretend_kernels(op, pretend, monkeypatch)
        public = getattr(kernelgen_ops, op)
        for args in _inputs(op):
            replays_like_lean(pretend, launcher, public, args)  # the first call, watched
        answers = [kept[3] for kept in call._answers.values()]
        assert any(isinstance(a, _plans._Plan) for a in answers), op
    finally:
        call.forget()
        kernelgen_ops.set_dispatch("measured")


def test_every_operator_has_a_call() -> None:
    ops = set(_calls_by_op())
    assert ops == set(kernelgen_ops.available()), ops


def _calls_by_op() -> dict[str, Any]:
    return {c.op: c for c in _calls.calls()}


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["softmax", "rms_norm", "silu_and_mul"])
def test_public_replays_compute_what_the_launcher_computes(op: str) -> None:
    """On a GPU, with plans on: the public call's replays equal the launcher's output bit for
    bit, on padded, misaligned and dense inputs."""
    from test_launch import _gpu_inputs

    module = importlib.import_module(f"kernelgen_ops.{op}")
    launcher = getattr(module, op)
    launcher = getattr(launcher, "__wrapped__", launcher)
    call = _calls_by_op()[op]
    before = _plans.enabled()
    _plans.set_enabled(True)
    call.forget()
    kernelgen_ops.set_dispatch("kernel")
    try:
        for args in _gpu_inputs(op, torch.bfloat16):
            getattr(kernelgen_ops, op)(*args)
            again = tuple(
                torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device).copy_(a)
                if isinstance(a, torch.Tensor)
                else a
                for a in args
            )
            got, want = getattr(kernelgen_ops, op)(*again), launcher(*again)
            assert torch.equal(got, want), f"{op} {tuple(args[0].shape)} {args[0].stride()}"
        assert any(isinstance(k[3], _plans._Plan) for k in call._answers.values())
    finally:
        _plans.set_enabled(before)
        call.forget()
        kernelgen_ops.set_dispatch("measured")
