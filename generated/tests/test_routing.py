"""enable / disable / use: matching torch calls reach the generated kernels, everything else
reaches torch, and torch's functions are back exactly as they were afterwards."""

import json
import sys
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import kernelgen_ops
from kernelgen_ops import _runtime

ORIGINALS = {
    "torch.softmax": torch.softmax,
    "F.softmax": F.softmax,
    "F.rms_norm": F.rms_norm,
}


def _untouched() -> None:
    assert torch.softmax is ORIGINALS["torch.softmax"]
    assert F.softmax is ORIGINALS["F.softmax"]
    assert F.rms_norm is ORIGINALS["F.rms_norm"]
    assert "softmax" not in vars(torch.Tensor)  # inherited from TensorBase again, not shadowed


class Spy:
    """Counts the calls that reach an operator module's launcher."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, op: str) -> None:
        module = sys.modules[f"kernelgen_ops.{op}"]
        self.launcher: Callable = getattr(module, op)
        self.calls = 0
        monkeypatch.setattr(module, op, self)

    def __call__(self, *args: object) -> torch.Tensor:
        self.calls += 1
        return self.launcher(*args)


@pytest.fixture(autouse=True)
def _kernel_wherever_routable():
    """These tests are about which calls may reach a kernel; whether one should, by the measured
    crossover, is test_dispatch.py's (on CPU there is no evidence, so routed calls would all
    keep torch's op)."""
    _runtime.set_dispatch("kernel")
    yield
    _runtime.set_dispatch("measured")


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, Spy]:
    return {op: Spy(monkeypatch, op) for op in ("softmax", "rms_norm")}


def _x(device: str, shape: tuple[int, ...] = (6, 50), dtype: torch.dtype = torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device, dtype)


def test_softmax_calls_are_routed(spies: dict[str, Spy], device: str, dtype: torch.dtype) -> None:
    x = _x(device, dtype=dtype)
    want = torch.softmax(x, -1)
    kernelgen_ops.enable()
    calls: list[Callable[[], torch.Tensor]] = [
        lambda: torch.softmax(x, -1),
        lambda: torch.softmax(x, dim=1),
        lambda: torch.softmax(x, -1, dtype=None),
        lambda: F.softmax(x, dim=-1),
        lambda: F.softmax(x, -1),
        lambda: x.softmax(-1),
        lambda: x.softmax(dim=-1),
        lambda: torch.nn.Softmax(dim=-1)(x),
    ]
    for i, call in enumerate(calls, 1):
        torch.testing.assert_close(call(), want)
        assert spies["softmax"].calls == i
    kernelgen_ops.disable()
    _untouched()


def test_rms_norm_calls_are_routed(spies: dict[str, Spy], device: str, dtype: torch.dtype) -> None:
    x = _x(device, dtype=dtype)
    w = (torch.rand(50) + 0.5).to(device, dtype)
    with kernelgen_ops.use():
        for args, kwargs in [
            ((x, (50,), w, 1e-6), {}),
            ((x, [50]), {"weight": w, "eps": 1e-5}),
            ((x, x.shape[-1:], w), {}),  # eps=None: torch's default, float32's epsilon
        ]:
            got = F.rms_norm(*args, **kwargs)
            with kernelgen_ops.use(include=[]):
                torch.testing.assert_close(got, F.rms_norm(*args, **kwargs))
        assert spies["rms_norm"].calls == 3
        norm = torch.nn.RMSNorm(50, eps=1e-6, device=device, dtype=dtype)
        with torch.no_grad():  # its weight is a parameter that requires grad
            norm(x)
        assert spies["rms_norm"].calls == 4
    _untouched()


def test_other_cases_go_to_torch(spies: dict[str, Spy], device: str) -> None:
    x = _x(device, (4, 6, 10))
    w = torch.ones(10, device=device)
    deferred: list[Callable[[], torch.Tensor]] = [
        lambda: torch.softmax(x, 0),  # another dim
        lambda: torch.softmax(x, 1),
        lambda: F.softmax(x, dim=-1, dtype=torch.float64),  # a cast first
        lambda: torch.softmax(x.double(), -1),  # an unsupported dtype
        lambda: torch.softmax(torch.ones(3, 0, device=device), -1),  # empty rows
        lambda: torch.softmax(torch.tensor(2.0, device=device), -1),  # a 0-d tensor
        lambda: F.rms_norm(x, (6, 10), torch.ones(6, 10, device=device)),  # two dims
        lambda: F.rms_norm(x, (10,)),  # no weight
        lambda: F.rms_norm(x.half(), (10,), w),  # another weight dtype
        lambda: F.rms_norm(x.half(), (10,), w.half(), eps=torch.tensor(1e-6)),  # odd eps
    ]
    with kernelgen_ops.use():
        outs = [call() for call in deferred]
    assert spies["softmax"].calls == 0 and spies["rms_norm"].calls == 0
    with kernelgen_ops.use(include=[]):
        for call, out in zip(deferred, outs, strict=True):
            torch.testing.assert_close(out, call())


def test_autograd_goes_to_torch(spies: dict[str, Spy], device: str) -> None:
    x = _x(device).requires_grad_()
    with kernelgen_ops.use():
        torch.softmax(x, -1)[:, 0].sum().backward()
        assert spies["softmax"].calls == 0 and x.grad is not None
        with torch.no_grad():
            torch.softmax(x, -1)
        with torch.inference_mode():
            torch.softmax(x, -1)
        assert spies["softmax"].calls == 2


def test_autocast_goes_to_torch(spies: dict[str, Spy], device: str) -> None:
    # CUDA autocast computes softmax in float32 and returns float32; the kernel returns float16.
    x = _x(device, dtype=torch.float16)
    with torch.autocast(device, dtype=torch.float16):
        want = torch.softmax(x, -1)
        with kernelgen_ops.use():
            out = torch.softmax(x, -1)
    assert spies["softmax"].calls == 0
    assert out.dtype == want.dtype


def test_vmap_goes_to_torch(spies: dict[str, Spy], device: str) -> None:
    x = _x(device, (3, 4, 8))
    with kernelgen_ops.use():
        out = torch.vmap(lambda t: torch.softmax(t, -1))(x)
    assert spies["softmax"].calls == 0
    torch.testing.assert_close(out, torch.softmax(x, -1))


def test_tracing_sees_torch(spies: dict[str, Spy], device: str) -> None:
    x = _x(device)

    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.softmax(t * 2, -1) + 1

    with kernelgen_ops.use():
        traced = torch.jit.trace(f, (x,), check_trace=False)
        assert spies["softmax"].calls == 0
        assert "aten::softmax" in str(traced.graph)  # not an opaque Triton launch
        # Routing must not break a graph; what the compiled graph runs is up to the backend.
        compiled = torch.compile(f, backend="eager", fullgraph=True)
        torch.testing.assert_close(compiled(x), f(x))
        # Symbolic sizes too (the route keeps answers per shape): still one graph.
        dynamic = torch.compile(f, backend="eager", fullgraph=True, dynamic=True)
        torch.testing.assert_close(dynamic(x), f(x))
        wider = _x(device).repeat(1, 2)
        torch.testing.assert_close(dynamic(wider), f(wider))
    torch.testing.assert_close(traced(x), f(x))


def test_cpu_without_the_interpreter_goes_to_torch(
    spies: dict[str, Spy], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_runtime, "INTERPRET", False)
    with kernelgen_ops.use():
        torch.softmax(torch.ones(2, 8), -1)
    assert spies["softmax"].calls == 0


def test_bf16_on_cpu_goes_to_torch(spies: dict[str, Spy]) -> None:
    with kernelgen_ops.use():
        torch.softmax(torch.ones(2, 8, dtype=torch.bfloat16), -1)
    assert spies["softmax"].calls == 0


def test_include_exclude_and_idempotence(spies: dict[str, Spy], device: str) -> None:
    x, w = _x(device), torch.ones(50, device=device)
    kernelgen_ops.enable(include=["softmax"])
    kernelgen_ops.enable(include=["softmax"])
    assert kernelgen_ops.routed() == ["softmax"]
    torch.softmax(x, -1), F.rms_norm(x, (50,), w, 1e-6)
    assert (spies["softmax"].calls, spies["rms_norm"].calls) == (1, 0)
    kernelgen_ops.enable(exclude=["softmax"])
    assert kernelgen_ops.routed() == ["rms_norm"]
    assert torch.softmax is ORIGINALS["torch.softmax"]
    kernelgen_ops.enable()
    kernelgen_ops.enable()
    assert sorted(kernelgen_ops.routed()) == ["rms_norm", "softmax"]
    kernelgen_ops.disable()
    kernelgen_ops.disable()
    _untouched()
    with pytest.raises(ValueError, match="silu_and_mul"):  # no torch op to stand in for
        kernelgen_ops.enable(include=["silu_and_mul"])
    with pytest.raises(ValueError, match="cannot route 'sofmax'"):
        kernelgen_ops.enable(exclude=["sofmax"])
    _untouched()


def test_use_restores_the_previous_state_even_on_errors(spies: dict[str, Spy]) -> None:
    kernelgen_ops.enable(include=["rms_norm"])
    with pytest.raises(KeyError), kernelgen_ops.use(include=["softmax"]):
        assert kernelgen_ops.routed() == ["softmax"]
        raise KeyError("boom")
    assert kernelgen_ops.routed() == ["rms_norm"]
    assert torch.softmax is ORIGINALS["torch.softmax"]
    kernelgen_ops.disable()
    with pytest.raises(RuntimeError), kernelgen_ops.use():
        raise RuntimeError
    _untouched()


def test_someone_elses_patch_survives_disable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Undone last: torch's own softmax is back after the test, not our wrapper that theirs kept
    # (it leaked into the tests after this one, which then saw two routes in a row).
    monkeypatch.setattr(torch, "softmax", torch.softmax)
    kernelgen_ops.enable()
    ours = torch.softmax

    def theirs(*args: object, **kwargs: object) -> torch.Tensor:
        return ours(*args, **kwargs)

    monkeypatch.setattr(torch, "softmax", theirs)
    kernelgen_ops.disable()
    assert torch.softmax is theirs


def test_dynamo_s_table_holds_torch_s_functions_not_ours() -> None:
    """In a fresh process whose first enable() comes before any compile, dynamo's table of
    torch functions (built once, by name) still holds torch's own softmax, not our route."""
    import subprocess

    code = (
        "import json, torch, kernelgen_ops\n"
        "own = torch.softmax\n"
        "kernelgen_ops.enable()\n"
        "from torch._dynamo import trace_rules\n"
        "table = trace_rules.get_torch_obj_rule_map()\n"
        "print(json.dumps([own in table, torch.softmax in table]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [True, False]


def test_a_python_entry_point_s_torch_path_is_one_route(spies: dict[str, Spy], device: str) -> None:
    """Where torch's op takes the call, a route is one frame: F.softmax's route runs torch's
    method without F.softmax's body (which would pass through our Tensor.softmax route once
    more), F.rms_norm's runs torch.rms_norm without F.rms_norm's, and torch's C functions are
    called as the caller called the route; the same result bit for bit, no kernel."""
    x = _x(device)
    w = torch.randn(50, generator=torch.Generator().manual_seed(1)).to(device)
    calls = {
        "F.softmax(x, -1)": lambda: F.softmax(x, -1),
        "F.softmax(x, dim=-1)": lambda: F.softmax(x, dim=-1),
        "torch.softmax(x, -1)": lambda: torch.softmax(x, -1),
        "x.softmax(-1)": lambda: x.softmax(-1),
        "F.rms_norm(x, (50,), w, eps)": lambda: F.rms_norm(x, (50,), w, 1e-5),
        "F.rms_norm(x, (50,), eps=eps)": lambda: F.rms_norm(x, (50,), eps=1e-5),
    }
    want = {name: call() for name, call in calls.items()}

    def route_of(name: str) -> str:
        owner = {"F": "torch.nn.functional", "x": "torch.Tensor"}.get(name.split(".")[0], "torch")
        return f"<kernelgen_ops route {owner}.{name.split('.')[1].split('(')[0]}>"

    with kernelgen_ops.use():
        _runtime.set_dispatch("torch")
        for name, call in calls.items():
            call()  # the shape's answer kept: a repeat call is watched
            frames: list[tuple[str, str]] = []

            def watch(frame, event: str, arg: object, frames: list = frames) -> None:  # noqa: ANN001
                if event == "call" and frame.f_code.co_filename != __file__:
                    frames.append((frame.f_code.co_filename, frame.f_code.co_name))

            sys.setprofile(watch)
            try:
                got = call()
            finally:
                sys.setprofile(None)
            assert torch.equal(got, want[name]), name
            # The route, and the one question it asks in Python (dynamo's, folded to True there).
            assert [f for f, _ in frames[:1]] == [route_of(name)], (name, frames)
            assert [n for _, n in frames[1:]] == ["is_dynamo_compiling"], (name, frames)
    assert spies["softmax"].calls == spies["rms_norm"].calls == 0
    _untouched()


def test_the_routes_signatures_are_torch_s() -> None:
    """A route of a Python function of torch's takes exactly its parameters (names, kinds,
    defaults): a torch release that changes one fails here, not in a user's call."""
    import inspect

    from kernelgen_ops import _routing

    python = [
        (e, getattr(e.owner, e.attr))
        for op in _routing.routable()
        for e in _routing.entries(op)
        if inspect.isfunction(getattr(e.owner, e.attr))
    ]
    assert {e.name for e, _ in python} >= {
        "torch.nn.functional.softmax",
        "torch.nn.functional.rms_norm",
    }
    for entry, original in python:
        route = _routing._route(entry.op, entry, original)
        ours = inspect.signature(route, follow_wrapped=False)
        theirs = inspect.signature(original).replace(return_annotation=inspect.Signature.empty)
        assert ours == theirs.replace(
            parameters=[p.replace(annotation=p.empty) for p in theirs.parameters.values()]
        ), entry.attr


def test_a_torch_function_mode_still_sees_the_functional_calls(device: str) -> None:
    """Under a __torch_function__ mode the routes step aside before reading the tensor (and
    F.softmax's shortcut past its body with them): the mode sees what it sees without routing."""
    from torch.overrides import TorchFunctionMode

    class Seen(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = _x(device)
    w = torch.randn(50).to(device)

    def run() -> list[str]:
        with Seen() as seen:
            F.softmax(x, -1)
            F.rms_norm(x, (50,), w, 1e-5)
        return seen.names

    plain = run()
    with kernelgen_ops.use():
        _runtime.set_dispatch("torch")
        routed = run()
    assert plain == routed == ["softmax", "rms_norm"]


def test_what_is_routed_is_what_the_manifest_records() -> None:
    """routable() is the operators MANIFEST.json records torch entry points for, and enable()
    patches exactly those entry points."""
    from kernelgen_ops import _routing

    ops = kernelgen_ops.available()
    assert kernelgen_ops.routable() == sorted(op for op, e in ops.items() if e["routes"])
    assert "silu_and_mul" not in kernelgen_ops.routable()  # no torch entry point declared
    declared = {r["function"] for op in kernelgen_ops.routable() for r in ops[op]["routes"]}
    kernelgen_ops.enable()
    patched = {e.name for op in _routing.routed() for e in _routing.entries(op)}
    assert patched == declared
    assert all(
        hasattr(getattr(e.owner, e.attr), "source") for op in ops for e in _routing.entries(op)
    )
    kernelgen_ops.disable()
    _untouched()


def test_a_declared_entry_point_needs_no_code_of_its_own(
    spies: dict[str, Spy], device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry point the library has no line for, declared as data the way MANIFEST.json
    records SPEC.routes: its route takes the kernel exactly where every argument is a value its
    rule lets through, and passes every other call on unchanged."""
    import types

    from kernelgen_ops import _routing

    seen: list[tuple] = []

    def softmax_like(input, dim, mode="exact", *, scale=None):  # noqa: ANN001, ANN202
        seen.append((dim, mode, scale))
        return torch.softmax(input, dim)

    module = types.ModuleType("declared_elsewhere")
    module.softmax_like = softmax_like  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "declared_elsewhere", module)
    entry = _routing._Entry(
        op="softmax",
        name="declared_elsewhere.softmax_like",
        params='input, dim, mode="exact", *, scale=None',
        args={
            "input": {"takes": "input", "kernel": "x"},
            "dim": {"takes": "last_dim"},
            "mode": {"takes": "equals", "value": "exact"},
            "scale": {"takes": "none"},
        },
        kernel=("x",),
    )
    route = _routing._route("softmax", entry, softmax_like)
    x = _x(device)
    torch.testing.assert_close(route(x, -1), torch.softmax(x, -1))
    torch.testing.assert_close(route(x, dim=1, mode="exact"), torch.softmax(x, -1))
    assert spies["softmax"].calls == 2 and seen == []
    route(x, 0)  # another dim
    route(x, -1, "fast")  # another mode
    route(x, -1, scale=2.0)  # a value where the rule takes only None
    assert spies["softmax"].calls == 2
    assert seen == [(0, "exact", None), (-1, "fast", None), (-1, "exact", 2.0)]
    with pytest.raises(TypeError):
        route(x, -1, dtype=None)  # not a parameter of the entry point: as it would raise
