"""Lean launches (_launch.py): a kept compiled kernel is reused exactly when Triton would launch
the same one, and Triton's own path runs everywhere else.

On CPU, Triton runs for real against a pretend GPU: a driver answering device 0 and a stream, and
a compile step that makes a stand-in CompiledKernel recording its launches. JITFunction.run then
binds, specializes and keys every call as on a GPU, and _launch.CHECK makes each lean launch ask
Triton's binder which kernel Triton would have run. The GPU tests compare with Triton's path on
real kernels, in CUDA graphs, under torch.compile and on a side stream.
"""

import importlib
from typing import Any

import pytest
import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import CompiledKernel
from triton.runtime.jit import JITFunction

import kernelgen_ops
from kernelgen_ops import _launch, _plans, _runtime

OPS = ("softmax", "rms_norm", "silu_and_mul")
pytestmark = pytest.mark.skipif(not _launch.ACTIVE, reason="lean launches are off on this Triton")


# ------------------------------------------------------------ kernels (never compiled on CPU)


def _scale_kernel(y_ptr, x_ptr, n, stride, alpha, flag, BLOCK: tl.constexpr):
    pass


def _unaligned_ok_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    pass


FACTOR = 2


def _reads_a_global_kernel(y_ptr, BLOCK: tl.constexpr):
    tl.store(y_ptr, FACTOR)


def _helper(x):
    return x


def _calls_a_helper_kernel(y_ptr, BLOCK: tl.constexpr):
    tl.store(y_ptr, _helper(1))


class Pretend:
    """A pretend GPU for JITFunction.run; counts Triton's runs and the compiles they made."""

    def __init__(self) -> None:
        self.device = 0
        self.compiles = 0
        self.triton_runs = 0
        self.launches: list[tuple] = []

    # the driver
    def get_current_device(self) -> int:
        return self.device

    def get_current_stream(self, device: int) -> int:
        return 1000 + device

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", 90, 32)

    def jit(self, fn: Any, **options: Any) -> JITFunction:
        """A JITFunction whose compile step makes a StandIn and whose runs are counted."""
        kernel = JITFunction(fn, **options)
        triton_run = kernel.run

        def compile_stand_in(key, signature, device, constexprs, options, attrs, warmup):
            self.compiles += 1
            compiled = StandIn(self, signature, attrs)
            kernel.device_caches[device][0][key] = compiled
            return compiled

        def counted_run(*args: Any, **kwargs: Any) -> Any:
            self.triton_runs += 1
            return triton_run(*args, **kwargs)

        kernel._do_compile = compile_stand_in
        kernel.run = counted_run  # an instance attribute: JITFunction.run stays Triton's
        return kernel


class StandIn(CompiledKernel):
    """A compiled kernel whose launch (CompiledKernel.run) records its arguments."""

    def __init__(self, pretend: Pretend, signature: dict, attrs: dict) -> None:
        self.signature, self.attrs = signature, attrs
        self.function, self.packed_metadata, self.module, self.name = id(self), (), object(), "s"
        self._run = lambda *args: pretend.launches.append(args)

    def launch_metadata(self, grid: Any, stream: int, *args: Any) -> None:
        return None


@pytest.fixture(autouse=True)
def _lean_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of lean launches, whatever the environment running them says."""
    monkeypatch.setattr(_launch, "_enabled", True)


@pytest.fixture
def pretend(pretend: "Pretend", monkeypatch: pytest.MonkeyPatch) -> "Pretend":
    """conftest's pretend GPU, with CHECK on: every lean launch is the kernel Triton's binder
    picks."""
    monkeypatch.setattr(_launch, "CHECK", True)
    return pretend


def _args(**over: Any) -> tuple:
    x = over.pop("x", torch.randn(64))
    base = {"y": torch.empty(64), "x": x, "n": 64, "stride": 32, "alpha": 0.5, "flag": True}
    base.update(over)
    return tuple(base.values())


def _launch_twice(kernel: _launch.LeanKernel, args: tuple, **kwargs: Any) -> None:
    kernel[(4,)](*args, **kwargs)
    kernel[(4,)](*args, **kwargs)


# ------------------------------------------------------------ the key


def test_a_kept_kernel_is_launched_directly(pretend: Pretend) -> None:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    args = _args()
    for _ in range(5):
        assert kernel[(4, 2)](*args, BLOCK=64, num_warps=4) is not None
    assert (pretend.triton_runs, pretend.compiles) == (1, 1)
    triton_launch, *lean_launches = pretend.launches
    assert len(lean_launches) == 4
    # The same grid, stream, function and arguments (constexprs included) as Triton's launch;
    # no launch metadata and no hooks where Triton passed its empty hook chains.
    for launch in lean_launches:
        assert launch[:6] == triton_launch[:6] and launch[9:] == triton_launch[9:]
        assert launch[:4] == (4, 2, 1, 1000) and launch[6:9] == (None, None, None)
    assert triton_launch[6] is None and triton_launch[7] is not None


@pytest.mark.parametrize(
    ("name", "change", "runs"),
    [
        ("misaligned pointer", {"x": torch.randn(65)[1:]}, 2),  # 4 bytes past 16-byte alignment
        ("dtype", {"x": torch.randn(64).half()}, 2),
        ("int == 1", {"stride": 1}, 2),
        ("int not divisible by 16", {"stride": 33}, 2),
        ("int past int32", {"n": 2**31}, 2),
        ("int past int64", {"n": 2**63}, 2),
        # Another type than the binding's first call had: Triton's path on every such call.
        ("float where an int was", {"n": 64.0}, 3),
        ("None where a tensor was", {"y": None}, 3),
    ],
)
def test_what_triton_specializes_on_gives_a_new_key(
    pretend: Pretend, name: str, change: dict, runs: int
) -> None:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    _launch_twice(kernel, _args(), BLOCK=64)
    _launch_twice(kernel, _args(**change), BLOCK=64)
    assert (pretend.triton_runs, pretend.compiles) == (runs, 2), name


def test_one_is_not_just_another_odd_int(pretend: Pretend) -> None:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    _launch_twice(kernel, _args(stride=17), BLOCK=64)
    _launch_twice(kernel, _args(stride=1), BLOCK=64)  # Triton makes an int 1 a constexpr
    assert (pretend.triton_runs, pretend.compiles) == (2, 2)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("constexpr", {"BLOCK": 128}),
        ("num_warps", {"BLOCK": 64, "num_warps": 8}),
        ("num_stages", {"BLOCK": 64, "num_stages": 2}),
        ("debug", {"BLOCK": 64, "debug": True}),
    ],
)
def test_constexprs_and_options_are_in_the_key(pretend: Pretend, name: str, kwargs) -> None:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    _launch_twice(kernel, _args(), BLOCK=64)
    _launch_twice(kernel, _args(), **kwargs)
    assert (pretend.triton_runs, pretend.compiles) == (2, 2), name


def test_the_same_facets_share_a_key(pretend: Pretend) -> None:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    _launch_twice(kernel, _args(), BLOCK=64)
    # Other tensors (aligned), other ints with the same facets (multiples of 16, != 1), another
    # float and another bool: Triton specializes on none of the differences.
    _launch_twice(kernel, _args(x=torch.randn(64), n=4096, stride=48, alpha=3.0), BLOCK=64)
    _launch_twice(kernel, _args(n=17, stride=33, flag=False), BLOCK=64)
    assert pretend.compiles == 2  # n=17, stride=33: not multiples of 16
    assert pretend.triton_runs == 2


def test_key_function_facets() -> None:
    """The generated key itself: equal where Triton's specialization is equal, else different."""
    binding = _launch._Binding.build(JITFunction(_scale_kernel), _args(), {"BLOCK": 64})
    assert binding is not None

    def key(**over: Any) -> tuple:
        found = binding.key(0, _args(**over), {"BLOCK": 64})
        assert found is not None
        return found[0]

    same = key()
    assert key(x=torch.randn(64), n=128, stride=16) == same
    assert key(x=torch.randn(68)[4:]) == same  # 16 bytes in: still aligned
    assert key(x=torch.randn(65)[1:]) != same
    assert key(x=torch.randn(64).half()) != same
    assert key(n=1) != same and key(stride=1) != same
    assert key(stride=1) != key(stride=17)  # neither a multiple of 16; Triton makes 1 a constexpr
    assert key(n=65) != same and key(n=65) == key(n=81)
    assert key(n=2**31) != same and key(n=2**31) != key(n=2**63)
    assert binding.key(1, _args(), {"BLOCK": 64})[0] != same  # another device
    assert binding.key(0, _args(n=1.0), {"BLOCK": 64}) is None  # not this binding's types
    full = binding.key(0, _args(), {"BLOCK": 64})[1]
    assert full[-1] == 64 and len(full) == 7  # every parameter, in order, the constexpr last


def test_do_not_specialize_keeps_the_facets_anyway(pretend: Pretend) -> None:
    jit = pretend.jit(
        _scale_kernel, do_not_specialize=["n"], do_not_specialize_on_alignment=["x_ptr"]
    )
    kernel = _launch.LeanKernel(jit)
    _launch_twice(kernel, _args(), BLOCK=64)
    _launch_twice(kernel, _args(n=33, x=torch.randn(65)[1:]), BLOCK=64)
    # One compiled kernel serves both (Triton does not specialize on them), under two keys.
    assert pretend.compiles == 1 and pretend.triton_runs == 2


def test_each_device_has_its_own_kernels(pretend: Pretend) -> None:
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    _launch_twice(kernel, _args(), BLOCK=64)
    pretend.device = 1
    _launch_twice(kernel, _args(), BLOCK=64)
    assert (pretend.triton_runs, pretend.compiles) == (2, 2)
    assert pretend.launches[-1][3] == 1001  # device 1's current stream


# ------------------------------------------------------------ where Triton's path runs


def _triton_runs_every_call(pretend: Pretend, kernel: _launch.LeanKernel, grid: Any = (4,)):
    runs = pretend.triton_runs
    for _ in range(3):
        kernel[grid](*_args(), BLOCK=64)
    assert pretend.triton_runs == runs + 3


@pytest.fixture
def kept(pretend: Pretend) -> _launch.LeanKernel:
    """A kernel whose specialization is kept: the next launch of it would be lean."""
    kernel = _launch.LeanKernel(pretend.jit(_scale_kernel))
    _launch_twice(kernel, _args(), BLOCK=64)
    assert pretend.triton_runs == 1
    return kernel


def test_a_callable_grid_takes_triton(pretend: Pretend, kept: _launch.LeanKernel) -> None:
    _triton_runs_every_call(pretend, kept, grid=lambda meta: (4,))


def test_launch_hooks_take_triton(pretend: Pretend, kept: _launch.LeanKernel) -> None:
    from triton import knobs

    seen: list[Any] = []
    knobs.runtime.launch_enter_hook.add(seen.append)
    try:
        _triton_runs_every_call(pretend, kept)
    finally:
        knobs.runtime.launch_enter_hook.remove(seen.append)


def test_pre_run_hooks_take_triton(pretend: Pretend, kept: _launch.LeanKernel) -> None:
    kept.jit.add_pre_run_hook(lambda *args, **kwargs: None)
    _triton_runs_every_call(pretend, kept)


def test_switched_off_takes_triton(pretend: Pretend, kept: _launch.LeanKernel) -> None:
    _launch.set_enabled(False)
    try:
        _triton_runs_every_call(pretend, kept)
    finally:
        _launch.set_enabled(True)


def test_a_replaced_jit_run_sees_every_launch(
    pretend: Pretend, kept: _launch.LeanKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profiler or launch counter that replaces JITFunction.run sees every launch."""
    del kept.jit.run  # the pretend's counting run: the class's run from here on
    seen: list[int] = []
    run = JITFunction.run
    monkeypatch.setattr(
        JITFunction, "run", lambda self, *a, **k: seen.append(1) or run(self, *a, **k)
    )
    for _ in range(3):
        kept[(4,)](*_args(), BLOCK=64)
    assert len(seen) == 3


def test_a_changed_global_raises_as_in_triton(pretend: Pretend, monkeypatch) -> None:
    jit = pretend.jit(_reads_a_global_kernel)
    jit.cache_key  # noqa: B018  # what a compile does: records the globals the kernel reads
    kernel = _launch.LeanKernel(jit)
    y = torch.empty(4)
    kernel[(1,)](y, BLOCK=4)
    kernel[(1,)](y, BLOCK=4)
    assert pretend.triton_runs == 1
    monkeypatch.setitem(globals(), "FACTOR", 3)
    with pytest.raises(RuntimeError, match="FACTOR has changed"):
        kernel[(1,)](y, BLOCK=4)


def test_unknown_argument_types_take_triton(pretend: Pretend) -> None:
    class Sub(torch.Tensor):
        pass

    kernel = _launch.LeanKernel(pretend.jit(_unaligned_ok_kernel))
    x = torch.randn(8).as_subclass(Sub)
    for _ in range(3):
        kernel[(1,)](torch.empty(8), x, 8, BLOCK=8)
    assert pretend.triton_runs == 3 and pretend.compiles == 1
    kernel = _launch.LeanKernel(pretend.jit(_unaligned_ok_kernel))
    w = torch.nn.Parameter(torch.randn(8), requires_grad=False)
    _launch_twice(kernel, (torch.empty(8), w, 8), BLOCK=8)
    assert pretend.triton_runs == 4  # a Parameter is a plain tensor to the key


def test_install_leaves_kernels_that_kernels_call() -> None:
    helper, caller = JITFunction(_helper), JITFunction(_calls_a_helper_kernel)
    namespace = {"_helper": helper, "_calls_a_helper_kernel": caller, "other": 1}
    _launch.install(namespace)
    assert namespace["_helper"] is helper  # Triton's compiler must find the JITFunction
    assert isinstance(namespace["_calls_a_helper_kernel"], _launch.LeanKernel)
    assert namespace["_calls_a_helper_kernel"].jit is caller
    assert namespace["_calls_a_helper_kernel"].fn is caller.fn  # other attributes: the jit's
    assert namespace["other"] == 1


def test_install_leaves_interpreted_kernels_alone() -> None:
    """Under TRITON_INTERPRET=1 there is no compiled kernel to keep: nothing is replaced."""
    from triton.runtime.interpreter import InterpretedFunction

    interpreted = InterpretedFunction(_unaligned_ok_kernel)
    namespace = {"_unaligned_ok_kernel": interpreted}
    _launch.install(namespace)
    assert namespace["_unaligned_ok_kernel"] is interpreted


def _reads_triton_kernel(y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr, triton.cdiv(n, BLOCK))  # noqa: F821 - a name the kernel reads, never run


def test_host_helpers_compute_what_triton_does() -> None:
    namespace = {"triton": triton, "_k": JITFunction(_unaligned_ok_kernel)}
    _launch.host_helpers(namespace)
    host = namespace["triton"]
    assert host is not triton and host.jit is triton.jit and host.language is triton.language
    for n in [*range(-3, 70), 2**31 - 1, 2**31, 151936, 2**40 + 3]:
        assert host.next_power_of_2(n) == triton.next_power_of_2(n), n
        for d in (1, 3, 16, 128, 8192):
            assert host.cdiv(n, d) == triton.cdiv(n, d), (n, d)


def test_host_helpers_take_tritons_for_anything_but_ints(monkeypatch) -> None:
    seen: list[tuple] = []
    monkeypatch.setattr(triton, "cdiv", lambda *a: seen.append(a) or "triton's")
    namespace = {"triton": triton}
    _launch.host_helpers(namespace)
    host = namespace["triton"]
    assert host.cdiv(tl.constexpr(8), 2) == "triton's"
    assert host.cdiv(8.0, 2) == "triton's"
    assert host.cdiv(True, 2) == "triton's"  # a bool is not an int here
    _launch.set_enabled(False)
    try:
        assert host.cdiv(8, 2) == "triton's"  # lean launches off: Triton's path everywhere
    finally:
        _launch.set_enabled(True)
    assert host.cdiv(8, 2) == 4 and len(seen) == 4


def test_host_helpers_leave_a_module_whose_kernels_read_triton() -> None:
    namespace = {"triton": triton, "_k": JITFunction(_reads_triton_kernel)}
    _launch.host_helpers(namespace)
    assert namespace["triton"] is triton  # Triton would see the global changed and raise
    autotuned = triton.autotune([triton.Config({})], key=[])(JITFunction(_reads_triton_kernel))
    namespace = {"triton": triton, "_k": autotuned}
    _launch.host_helpers(namespace)
    assert namespace["triton"] is triton  # found through the autotuner too


def test_host_helpers_leave_interpreted_modules_alone() -> None:
    from triton.runtime.interpreter import InterpretedFunction

    for kernel in (
        InterpretedFunction(_unaligned_ok_kernel),
        triton.autotune([triton.Config({})], key=[])(InterpretedFunction(_unaligned_ok_kernel)),
    ):
        namespace = {"triton": triton, "_k": kernel}
        _launch.host_helpers(namespace)
        assert namespace["triton"] is triton  # what an interpreted kernel reads is not known


def test_the_library_modules_get_host_helpers_off_the_interpreter() -> None:
    for op in OPS:
        module = importlib.import_module(f"kernelgen_ops.{op}")
        assert (module.triton is triton) == _runtime.INTERPRET, op


def _kernels(op: str) -> dict[str, Any]:
    """An operator module's launched kernels (those no kernel of it calls), by global name."""
    from triton.runtime.interpreter import InterpretedFunction

    module = importlib.import_module(f"kernelgen_ops.{op}")
    kinds = (_launch.LeanKernel, JITFunction, InterpretedFunction)
    found = {name: v for name, v in vars(module).items() if isinstance(v, kinds)}
    fns = [v.jit.fn if isinstance(v, _launch.LeanKernel) else v.fn for v in found.values()]
    read = set().union(*(_launch._names(fn.__code__) for fn in fns))
    return {name: v for name, v in found.items() if name not in read}


def test_the_library_modules_launch_lean_off_the_interpreter() -> None:
    for op in OPS:
        kernels = _kernels(op)
        assert kernels, op
        for name, kernel in kernels.items():
            assert isinstance(kernel, _launch.LeanKernel) != _runtime.INTERPRET, f"{op}.{name}"


# ------------------------------------------------------------ the library's launchers


def _launcher_with_pretend_kernels(op: str, pretend: Pretend, monkeypatch) -> Any:
    module = importlib.import_module(f"kernelgen_ops.{op}")
    for name, kernel in _kernels(op).items():
        fn = kernel.jit.fn if isinstance(kernel, _launch.LeanKernel) else kernel.fn
        monkeypatch.setattr(module, name, _launch.LeanKernel(pretend.jit(fn)))
    return raw_launcher(module, op)


def raw_launcher(module: Any, op: str) -> Any:
    """The module's launcher itself, under the Planned wrapper that plans put over it."""
    launcher = getattr(module, op)
    return launcher.__wrapped__ if isinstance(launcher, _plans.Planned) else launcher


def _inputs(op: str) -> list[tuple]:
    sets = []
    for shape in ((1, 4096), (16, 7168), (3, 5, 130), (2, 40000)):
        x = torch.randn(shape)
        wide = torch.randn(*shape[:-1], shape[-1] + 1)
        views = [x, wide[..., 1:], x.transpose(-1, -2).contiguous().transpose(-1, -2)]
        for v in views:
            if op == "rms_norm":
                sets.append((v, torch.rand(shape[-1]) + 0.5, 1e-6))
            elif op == "silu_and_mul":
                sets.append((torch.cat([v, v], -1),))
            else:
                sets.append((v,))
    return sets


@pytest.mark.parametrize("op", OPS)
def test_the_library_launchers_reuse_only_what_triton_would(op: str, pretend, monkeypatch) -> None:
    launcher = _launcher_with_pretend_kernels(op, pretend, monkeypatch)
    sets = _inputs(op)
    for args in sets:
        launcher(*args)
    first, per_pass = pretend.triton_runs, len(pretend.launches)
    for _ in range(3):
        for args in sets:  # CHECK: every lean launch is the kernel Triton's binder picks
            launcher(*args)
    assert pretend.triton_runs == first, "later calls of a seen specialization took Triton's path"
    assert per_pass >= len(sets) and len(pretend.launches) == 4 * per_pass


# ------------------------------------------------------------ on a GPU


def _gpu_inputs(op: str, dtype: torch.dtype) -> list[tuple]:
    sets = []
    for rows, cols in ((1, 4096), (16, 7168), (33, 8200)):
        x = torch.randn(rows, cols + 1, device="cuda", dtype=dtype)
        for v in (x[:, :cols], x[:, 1:], x[:, :cols].contiguous()):  # padded, misaligned, dense
            if op == "rms_norm":
                sets.append((v, torch.rand(cols, device="cuda", dtype=dtype) + 0.5, 1e-6))
            elif op == "silu_and_mul":
                sets.append((torch.cat([v, v], -1)[:, 1:-1],))
            else:
                sets.append((v,))
    return sets


@pytest.fixture
def kernel_everywhere(monkeypatch: pytest.MonkeyPatch):
    """Every call takes the kernel (the dispatch table would send some to torch), CHECK on."""
    monkeypatch.setattr(_launch, "CHECK", True)
    _runtime.set_dispatch("kernel")
    yield
    _runtime.set_dispatch("measured")


@pytest.mark.gpu
@pytest.mark.parametrize("op", OPS)
def test_lean_results_equal_tritons(op: str, dtype: torch.dtype, kernel_everywhere) -> None:
    public = getattr(kernelgen_ops, op)
    kernels = _kernels(op).values()

    def fail(*args: Any, **kwargs: Any) -> None:
        pytest.fail("a kept specialization took Triton's path")

    for args in _gpu_inputs(op, dtype):
        _launch.set_enabled(False)
        try:
            want = public(*args)
        finally:
            _launch.set_enabled(True)
        public(*args)  # Triton's path once more, which keeps the kernels
        for kernel in kernels:
            kernel.jit.run = fail
        try:
            got = public(*args)
        finally:
            for kernel in kernels:
                del kernel.jit.run  # the class's run again
        assert torch.equal(got, want), f"{op} {tuple(args[0].shape)} {args[0].stride()}"


@pytest.mark.gpu
@pytest.mark.parametrize("op", OPS)
def test_a_cuda_graph_replays_a_library_call(op: str, kernel_everywhere) -> None:
    public = getattr(kernelgen_ops, op)
    args = _gpu_inputs(op, torch.bfloat16)[0]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            public(*args)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = public(*args)
    args[0].copy_(torch.randn_like(args[0]))  # new values in the captured input
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, getattr(kernelgen_ops._contracts, f"torch_{op}")(*args))


@pytest.mark.gpu
def test_torch_compile_fullgraph_calls_the_library(kernel_everywhere) -> None:
    def model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        h = kernelgen_ops.rms_norm(x * 2, w, 1e-6)
        return kernelgen_ops.softmax(h) + kernelgen_ops.silu_and_mul(torch.cat([h, h], -1))

    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)
    for rows in (1, 16, 64):
        x = torch.randn(rows, 4096, device="cuda")
        w = torch.rand(4096, device="cuda") + 0.5
        torch.testing.assert_close(compiled(x, w), model(x, w))


@pytest.mark.gpu
def test_a_lean_launch_goes_to_the_current_stream(kernel_everywhere) -> None:
    x = torch.randn(16, 4096, device="cuda")
    kernelgen_ops.softmax(x)
    kernelgen_ops.softmax(x)  # kept: the next one is lean
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # the side stream is busy for a while
        out = kernelgen_ops.softmax(x)
    assert torch.cuda.default_stream().query()  # nothing was queued behind the default stream
    assert not side.query()
    side.synchronize()
    torch.testing.assert_close(out, torch.softmax(x, -1))
