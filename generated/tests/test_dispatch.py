"""Dispatch by measured crossover: a call takes the kernel where the promoted record says it beat
torch's op on this device, torch's op where it lost; without evidence, routed torch calls keep
torch's op and direct calls take the kernel; set_dispatch("device") judges by device time alone
(for CUDA graphs), "kernel" and "torch" force either path."""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from pretend_device import H200, clear_lookups, pretend_h200

import kernelgen_ops
from kernelgen_ops import _calls, _runtime

TABLE = {
    "4096x4096": {"shape": "4096x4096", "kernel_us": 18.0, "torch_us": 26.0, "kernel": True},
    "256x262144": {"shape": "256x151936", "kernel_us": 742.0, "torch_us": 94.0, "kernel": False},
    # launch-bound: won counting host time, which a routed call pays more of
    "16x262144": {"shape": "16x151936", "kernel_us": 31.0, "torch_us": 41.0, "kernel": True,
                  "host_included": True},
    # launch-bound, torch's figure its device time: the kernel's is judged on a slower host
    "1x262144": {"shape": "1x151936", "kernel_us": 15.0, "torch_us": 40.5, "kernel": True,
                 "host_included": True, "torch_device_us": 40.5},
    "1x32768": {"shape": "1x32000", "kernel_us": 9.7, "torch_us": 12.9, "kernel": True,
                "host_included": True, "torch_device_us": 12.9, "kernel_device_us": 5.5},
    "1x4096": {"shape": "1x4096", "kernel_us": 12.2, "torch_us": 18.3, "kernel": True,
               "host_included": True, "torch_device_us": 6.8, "kernel_device_us": 2.1},
}  # fmt: skip


@pytest.fixture
def on_h200(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """softmax's shipped configs with TABLE as its H200 evidence, on a pretend H200."""
    shipped = json.loads((Path(_runtime.__file__).parent / "configs" / "softmax.json").read_text())
    shipped["dispatch"] = {f"{H200}|triton-3.6.0": TABLE}
    pretend_h200(monkeypatch, tmp_path, {"softmax": shipped})
    yield
    clear_lookups()


@pytest.mark.parametrize("routed", [True, False])
def test_the_measured_winner_is_taken(on_h200, routed: bool) -> None:
    assert not _runtime.use_torch("softmax", (4096, 4096), routed=routed)
    assert not _runtime.use_torch("softmax", (3000, 5000), routed=routed)  # same bucket
    assert _runtime.use_torch("softmax", (256, 151936), routed=routed)  # the kernel lost
    assert _runtime.use_torch("softmax", (200, 100000), routed=routed)  # its nearest bucket


def test_a_routed_call_takes_torch_where_host_time_decided(on_h200) -> None:
    """At a launch-bound shape the kernel won on host time; a routed call pays the routing
    wrapper's checks on top, so it takes torch's op there, and a direct call the kernel."""
    assert not _runtime.use_torch("softmax", (16, 151936), routed=False)
    assert _runtime.use_torch("softmax", (16, 151936), routed=True)
    assert _runtime.kernel_won("softmax", 0, (16, 151936)) is True
    assert _runtime.kernel_won("softmax", 0, (16, 151936), routed=True) is False


def test_a_launch_bound_row_is_judged_on_a_slower_host(on_h200) -> None:
    """Where host time decided and the row keeps torch's device time: the kernel's call, scaled
    by HOST_SLOWDOWN (plus the route's cost for a routed call), must still beat torch's op by
    the margin; torch's own figure is scaled too where its host time decided it."""
    slow, route = _runtime.HOST_SLOWDOWN, _runtime.ROUTED_KERNEL_US
    # 1x151936: 15 us against torch's 40.5 on the device, 24.9 (+10 routed) on a slow host.
    assert _runtime.kernel_won("softmax", 0, (1, 151936), routed=True) is True
    assert not _runtime.use_torch("softmax", (1, 151936), routed=True)
    # 1x32000: the kernel's 9.7 beat torch's 12.9 on the host measured, not on a slower one.
    assert _runtime.kernel_won("softmax", 0, (1, 32000)) is False
    assert _runtime.use_torch("softmax", (1, 32000), routed=False)
    # 1x4096: torch's 18.3 was its host time (6.8 on the device): both scale, the direct call
    # keeps the kernel; a routed call's route costs more than the kernel saves.
    assert _runtime.kernel_won("softmax", 0, (1, 4096), routed=False) is True
    assert _runtime.kernel_won("softmax", 0, (1, 4096), routed=True) is False
    row = TABLE["1x262144"]
    edge = (row["torch_device_us"] * (1 - _runtime.DISPATCH_MARGIN) - route) / slow
    assert _runtime._wins_on_a_slow_host(row | {"kernel_us": edge}, routed=True)
    assert not _runtime._wins_on_a_slow_host(row | {"kernel_us": edge + 0.01}, routed=True)
    assert _runtime._wins_on_a_slow_host(row | {"kernel_us": edge + route / slow}, routed=False)
    old = {k: v for k, v in row.items() if k != "torch_device_us"}  # a row from before
    assert _runtime._wins_on_a_slow_host(old, routed=False)
    assert not _runtime._wins_on_a_slow_host(old, routed=True)


def test_the_shipped_tables_route_large_vocabularies_to_the_kernel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The library's own H200 rows, judged on a host HOST_SLOWDOWN slower: a softmax over a 152k
    vocabulary takes the kernel (16x151936: 17.6 us per call, 29.1 on the slow host, 39.1 routed,
    against torch's 40.6 on the device; a routed 1x151936 call, at 18.4, keeps torch's op), over
    a 32k one torch's op, even called directly (the kernel's 9.7 us against torch's 12.9 on
    the device: 16.1 on the slow host). rms_norm at decode shapes: the kernel called directly
    (12.2-13.0 us against F.rms_norm's 18.2-18.4, both host time), torch's op routed."""
    here = Path(_runtime.__file__).parent / "configs"
    shipped = {op: json.loads((here / f"{op}.json").read_text()) for op in ("softmax", "rms_norm")}
    pretend_h200(monkeypatch, tmp_path, shipped)
    try:
        assert not _runtime.use_torch("softmax", (16, 151936), routed=True)
        assert not _runtime.use_torch("softmax", (64, 151936), routed=True)
        assert _runtime.use_torch("softmax", (1, 151936), routed=True)
        assert not _runtime.use_torch("softmax", (1, 151936), routed=False)
        for dims in [(1, 32000), (16, 32000)]:
            assert _runtime.use_torch("softmax", dims, routed=True), dims
            assert _runtime.use_torch("softmax", dims, routed=False), dims
        for dims in [(1, 4096), (8, 7168), (64, 7168)]:
            assert _runtime.use_torch("rms_norm", dims, routed=True), dims
            assert not _runtime.use_torch("rms_norm", dims, routed=False), dims
        # By device time alone, as inside a CUDA graph: the kernel at every decode shape of both
        # (softmax 1x32000: 5.48 us against 12.92; rms_norm 1x4096: 2.07 against 6.78).
        kernelgen_ops.set_dispatch("device")
        for op, dims in [
            ("softmax", (1, 32000)), ("softmax", (16, 32000)), ("softmax", (1, 151936)),
            ("rms_norm", (1, 4096)), ("rms_norm", (8, 7168)), ("rms_norm", (64, 7168)),
        ]:  # fmt: skip
            for routed in (False, True):
                assert not _runtime.use_torch(op, dims, routed=routed), (op, dims)
    finally:
        kernelgen_ops.set_dispatch("measured")
        clear_lookups()


def test_far_from_every_measured_shape_is_no_evidence(on_h200) -> None:
    assert _runtime.kernel_won("softmax", 0, (1, 64)) is None
    assert _runtime.use_torch("softmax", (1, 64), routed=True)
    assert not _runtime.use_torch("softmax", (1, 64), routed=False)


def test_another_device_has_no_evidence(on_h200, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: "NVIDIA A100")
    clear_lookups()
    assert _runtime.kernel_won("softmax", 0, (4096, 4096)) is None
    assert _runtime.use_torch("softmax", (4096, 4096), routed=True)
    assert not _runtime.use_torch("softmax", (4096, 4096), routed=False)


def test_set_dispatch_forces_a_path(on_h200) -> None:
    try:
        kernelgen_ops.set_dispatch("kernel")
        assert kernelgen_ops.dispatch_mode() == "kernel"
        assert not _runtime.use_torch("softmax", (256, 151936), routed=True)
        kernelgen_ops.set_dispatch("torch")
        assert _runtime.use_torch("softmax", (4096, 4096), routed=False)
    finally:
        kernelgen_ops.set_dispatch("measured")
    with pytest.raises(ValueError, match="expected one of"):
        kernelgen_ops.set_dispatch("fastest")


def test_a_lost_shape_calls_torchs_op(on_h200, monkeypatch: pytest.MonkeyPatch) -> None:
    """Direct and routed calls where the kernel lost never reach the launcher (which could not
    run here: the GPU is pretend)."""
    module = sys.modules["kernelgen_ops.softmax"]
    monkeypatch.setattr(module, "softmax", lambda x: pytest.fail("the kernel was launched"))
    monkeypatch.setattr(kernelgen_ops._contracts, "check_softmax", lambda x: None)
    x = torch.randn(256, 151936 // 64)
    monkeypatch.setattr(kernelgen_ops._contracts, "dims_softmax", lambda x: (256, 151936))
    torch.testing.assert_close(kernelgen_ops.softmax(x), torch.softmax(x, -1))
    with kernelgen_ops.use(include=["softmax"]):
        monkeypatch.setattr(kernelgen_ops._routing, "_routable", lambda x: True)
        torch.testing.assert_close(torch.softmax(x, -1), torch.softmax.__wrapped__(x, -1))


def test_without_evidence_here_routed_calls_keep_torch(device: str) -> None:
    """On this machine's device the shipped tables (made on an H200) are no evidence, unless it
    is an H200: a routed call then goes to torch only where the table says so."""
    x = torch.randn(6, 50, device=device)
    index = _runtime._device_index()
    won = _runtime.kernel_won("softmax", index, _runtime_dims(x))
    assert _runtime.use_torch("softmax", _runtime_dims(x), routed=True) == (won is not True)
    assert _runtime.use_torch("softmax", _runtime_dims(x), routed=False) == (won is False)


def _runtime_dims(x: torch.Tensor) -> tuple[int, ...]:
    return kernelgen_ops._contracts.dims_softmax(x)


def test_available_shows_the_table() -> None:
    for op, entry in kernelgen_ops.available().items():
        assert "dispatch" in entry, op
        for device, table in entry["dispatch"].items():
            assert "|triton-" in device
            for row in table.values():
                # The kernel takes only shapes it won, by a margin (kernelgen's
                # package.DISPATCH_MARGIN): a tie is torch's.
                if row["kernel"]:
                    assert row["kernel_us"] < row["torch_us"], (op, row)


@pytest.mark.parametrize(
    ("op", "args", "dims"),
    [
        ("softmax", lambda: (torch.randn(2, 3, 50),), (6, 50)),
        ("rms_norm", lambda: (torch.randn(4, 8), torch.randn(8), 1e-6), (4, 8)),
        ("silu_and_mul", lambda: (torch.randn(5, 2, 14),), (10, 7)),
    ],
)
def test_dims_and_torchs_op(op: str, args, dims: tuple[int, ...]) -> None:
    """The bucket dims the table is keyed by, and torch's op computing what the kernel does."""
    a = args()
    contracts = kernelgen_ops._contracts
    assert getattr(contracts, f"dims_{op}")(*a) == dims
    want = {
        "softmax": lambda x: torch.softmax(x, -1),
        "rms_norm": lambda x, w, eps: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w,
        "silu_and_mul": lambda x: torch.nn.functional.silu(x[..., :7]) * x[..., 7:],
    }[op](*a)
    torch.testing.assert_close(getattr(contracts, f"torch_{op}")(*a), want)


def test_a_routed_call_where_torch_wins_skips_the_kernels_checks(
    on_h200, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the table says torch, a routed call goes to torch's op after one lookup: the checks
    that only a call to the kernel needs (tracing, autocast, the tensor's kind) are not run.
    Where it says kernel, they are."""
    from kernelgen_ops import _routing

    # Shapes of the table's buckets without their memory: one element, expanded.
    lost = torch.randn(1, 1, dtype=torch.float16).expand(128, 151936)  # 256x262144's bucket
    won = torch.randn(1, 1, dtype=torch.float16).expand(2048, 4096)  # 4096x4096's
    checked = []
    monkeypatch.setattr(_routing, "_routable", lambda x: checked.append(x) or False)
    with kernelgen_ops.use(include=["softmax"]):
        for _ in range(2):  # the second time from the kept answer for the shape
            torch.testing.assert_close(torch.softmax(lost, -1), torch.softmax.__wrapped__(lost, -1))
            torch.testing.assert_close(lost.softmax(dim=-1), torch.softmax.__wrapped__(lost, -1))
        assert checked == []
        torch.testing.assert_close(torch.softmax(won, -1), torch.softmax.__wrapped__(won, -1))
        assert len(checked) == 1  # the kernel won there: the full checks ran (and said no)
        # The mode is asked on every call, before the kept answer.
        kernelgen_ops.set_dispatch("kernel")
        try:
            torch.softmax(lost, -1)
        finally:
            kernelgen_ops.set_dispatch("measured")
        assert len(checked) == 2


def test_routed_answers_are_per_device_where_devices_differ(
    on_h200, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One GPU model: a routed call's kept answer is per shape. Two models: per device too,
    since each has its own table (here the second has none: torch's op)."""
    from kernelgen_ops import _launch

    assert _runtime.one_table()
    x = torch.randn(1, 1, dtype=torch.float16).expand(2048, 4096)  # 4096x4096's bucket
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    names = {0: H200, 1: "NVIDIA A100-SXM4-80GB"}
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: names[index or 0])
    clear_lookups()
    assert not _runtime.one_table()
    answers = {}
    for index in (0, 1):
        monkeypatch.setattr(_launch, "_current_device", lambda index=index: index)
        answers[index] = _runtime.routed_to_torch("softmax", x.shape)
    assert answers == {0: False, 1: True}
    assert set(_runtime.ROUTED_KEPT["softmax"]) == {(0, x.shape), (1, x.shape)}


def test_a_routed_call_s_shape_answer_is_the_table_s(on_h200) -> None:
    for shape, dims in [((128, 151936), (128, 151936)), ((4, 8, 4096), (32, 4096))]:
        want = _runtime.use_torch("softmax", dims, routed=True)
        assert _runtime.routed_to_torch("softmax", torch.Size(shape)) is want
    assert _runtime.routed_to_torch("softmax", torch.Size([])) is False  # 0-d: the checks decide


def test_rms_norms_bucket_dims_are_softmaxs() -> None:
    """The routes look the table up with dims_softmax for both operators."""
    from kernelgen_ops import _contracts

    x, w = torch.randn(3, 5, 16), torch.randn(16)
    assert _contracts.dims_rms_norm(x, w, 1e-6) == _contracts.dims_softmax(x) == (15, 16)


def test_device_mode_judges_by_device_time(on_h200) -> None:
    """set_dispatch("device"), for steps run as CUDA graphs: softmax 1x32000's kernel at 5.5 us
    against torch's 12.9 on the device takes the call, routed or not (outside a graph its 9.7
    us call loses on a slower host); so does a routed 1x4096 (no route is paid in a graph). A
    launch-bound row without the kernel's device time keeps the measured answer; a row of
    device times, and a shape without evidence, answer as in the measured mode."""
    assert _runtime.use_torch("softmax", (1, 32000), routed=False)
    assert _runtime.use_torch("softmax", (1, 4096), routed=True)
    kernelgen_ops.set_dispatch("device")
    try:
        assert kernelgen_ops.dispatch_mode() == "device"
        for routed in (False, True):
            assert not _runtime.use_torch("softmax", (1, 32000), routed=routed)
            assert not _runtime.use_torch("softmax", (1, 4096), routed=routed)
            assert _runtime.use_torch("softmax", (256, 151936), routed=routed)
            assert not _runtime.use_torch("softmax", (4096, 4096), routed=routed)
        assert _runtime.use_torch("softmax", (16, 151936), routed=True)  # no device time kept
        assert not _runtime.use_torch("softmax", (16, 151936), routed=False)
        assert _runtime.use_torch("softmax", (1, 64), routed=True)  # no evidence
        assert not _runtime.use_torch("softmax", (1, 64), routed=False)
    finally:
        kernelgen_ops.set_dispatch("measured")
    row = TABLE["1x32768"]
    edge = row["torch_device_us"] * (1 - _runtime.DISPATCH_MARGIN)
    assert _runtime.takes_kernel_on_device(row | {"kernel_device_us": edge - 0.01}, routed=True)
    assert not _runtime.takes_kernel_on_device(row | {"kernel_device_us": edge}, routed=True)


def test_a_direct_call_follows_the_mode(on_h200, monkeypatch: pytest.MonkeyPatch) -> None:
    """kernelgen_ops.softmax at 1x32000: torch's op in the measured mode, the kernel in the
    device mode, and back: the key's kept answer is the mode's."""
    module = sys.modules["kernelgen_ops.softmax"]
    contracts = kernelgen_ops._contracts
    monkeypatch.setattr(module, "softmax", lambda x: "kernel")
    monkeypatch.setattr(contracts, "check_softmax", lambda x: None)
    monkeypatch.setattr(contracts, "torch_softmax", lambda x: "torch")
    monkeypatch.setattr(contracts, "dims_softmax", lambda x: (1, 32000))
    x = torch.randn(1, 320)
    try:
        assert [kernelgen_ops.softmax(x) for _ in range(2)] == ["torch", "torch"]
        kernelgen_ops.set_dispatch("device")
        assert [kernelgen_ops.softmax(x) for _ in range(2)] == ["kernel", "kernel"]
        kernelgen_ops.set_dispatch("measured")
        assert kernelgen_ops.softmax(x) == "torch"
    finally:
        kernelgen_ops.set_dispatch("measured")
        for call in _calls.calls():
            call.forget()


def test_a_bad_dispatch_variable_fails_the_import() -> None:
    env = {**os.environ, "KERNELGEN_OPS_DISPATCH": "fastest"}
    done = subprocess.run(
        [sys.executable, "-c", "import kernelgen_ops"], env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "KERNELGEN_OPS_DISPATCH='fastest'; expected one of ('measured', 'device'" in done.stderr


@pytest.mark.gpu
def test_a_cuda_graph_in_the_device_mode_records_the_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On the H200, with the shipped tables, in the device mode from the warm-up on: softmax
    1x32000 called directly and F.rms_norm 1x4096 routed, which take torch's op in the measured
    mode, run the kernels in the warm-up and in the capture, and the graph's replay computes
    torch's answers."""
    kernelgen_ops.set_dispatch("device")
    try:
        if _runtime.use_torch("softmax", (1, 32000), routed=False):
            pytest.skip("no evidence here that the kernel wins on the device (not an H200)")
        launched: list[str] = []

        def spy(op: str, launcher: Any, *args: Any) -> Any:
            launched.append(op)
            return launcher(*args)

        for op in ("softmax", "rms_norm"):
            module = sys.modules[f"kernelgen_ops.{op}"]
            # A partial, not a function: no launch plan is made of it, so every call shows.
            monkeypatch.setattr(module, op, functools.partial(spy, op, getattr(module, op)))
        x = torch.randn(1, 32000, device="cuda")
        h, w = torch.randn(1, 4096, device="cuda"), torch.rand(4096, device="cuda") + 0.5
        with kernelgen_ops.use(include=["rms_norm"]):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    kernelgen_ops.softmax(x)
                    torch.nn.functional.rms_norm(h, (4096,), w, 1e-6)
            torch.cuda.current_stream().wait_stream(side)
            assert launched == ["softmax", "rms_norm"] * 3
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                probs = kernelgen_ops.softmax(x)
                normed = torch.nn.functional.rms_norm(h, (4096,), w, 1e-6)
        assert launched == ["softmax", "rms_norm"] * 4
        x.copy_(torch.randn_like(x))
        h.copy_(torch.randn_like(h))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(probs, torch.softmax(x, -1))
        torch.testing.assert_close(normed, torch.nn.functional.rms_norm(h, (4096,), w, 1e-6))
    finally:
        kernelgen_ops.set_dispatch("measured")
        for call in _calls.calls():
            call.forget()
