"""scripts/bench_library.py's serving peers without a GPU: which families a run starts, a family
that is not installed recorded per shape with its reason (the dry path, run for real), how a
family's API is chosen and bound per shape, and the serving peers counted in the best peer."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from scripts_module import script

from kernelgen.spec import BenchShape, load_spec
from kernelgen.spec.inputs import make_inputs

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


@pytest.fixture(scope="module")
def bench():
    return script("bench_library")


@pytest.fixture(scope="module")
def worker():
    return script("bench_library_worker")


def test_a_family_starts_only_for_its_ops_and_kernelgen_runs_last(bench) -> None:
    everyone = list(bench.GROUPS)
    assert bench.started(everyone, ["silu_and_mul"]) == ["liger", "flaggems", "kernelgen"]
    assert bench.started(everyone, ["softmax"]) == ["quack", "liger", "flaggems", "kernelgen"]
    started = bench.started(everyone, ["decode_attn", "fp8_gemm"])
    assert {"flashinfer", "sglang", "scaled_mm"} <= set(started)
    assert not {"quack", "vllm", "flashmla"} & set(started)
    assert started[-1] == "kernelgen"


def test_the_library_groups_shares_grow_with_the_operators_asked_for(bench) -> None:
    three = ["softmax", "rms_norm", "silu_and_mul"]
    assert sum(bench.share(g, three) for g in ("kernelgen", "liger", "flaggems")) == 231.0
    six = [*three, "decode_attn", "fused_moe", "fp8_gemm"]
    assert bench.share("kernelgen", six) == 2 * bench.share("kernelgen", three)
    assert bench.share("sglang", six) == bench.share("sglang", three)  # its family's, fixed


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) for m in ("vllm", "flashinfer")),
    reason="a peer is installed here: the dry path is for a machine without it",
)
def test_a_family_that_is_not_there_is_recorded_per_shape_with_why(tmp_path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_library.py"), str(out), "--ops", "fused_moe",
         "decode_attn", "--groups", "vllm", "flashinfer"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    record = json.loads(out.read_text())
    assert done.returncode == 0, done.stderr[-2000:]
    assert [w["group"] for w in record["workers"]] == ["vllm", "flashinfer"]
    assert all(w["state"] == "finished" for w in record["workers"])
    why = {a["impl"]: a for a in record["availability"]}
    assert not why["vllm"]["available"] and "304 MB wheel" in why["vllm"]["reason"]
    assert not why["flashinfer"]["available"] and "flashinfer" in why["flashinfer"]["reason"]
    # One figure's place per shape of each op the family has: the reason where the time would be.
    for group, op in (("vllm", "fused_moe"), ("flashinfer", "decode_attn")):
        rows = [m for m in record["measurements"] if m["impl"] == group]
        assert {m["op"] for m in rows} == {op}
        assert [m["shape"] for m in rows] == [b.name for b in load_spec(op).data.bench]
        assert all(m["device_us"] is None and m["error"].startswith(group) for m in rows)
    assert "not staged" in next(m for m in record["measurements"] if m["impl"] == "vllm")["error"]


def test_a_serving_peer_counts_in_the_best_peer(bench) -> None:
    def m(impl: str, us: float):
        return bench.Measurement(
            op="softmax", shape="4096x4096", dims={"rows": 4096, "cols": 4096},
            dtype="bfloat16", decode=False, impl=impl, device_us=us,
        )  # fmt: skip

    ratios = bench.summarize([m("kernelgen_ops", 30.0), m("eager", 60.0), m("quack", 20.0)])
    best = next(r for r in ratios if r.against == "best_peer" and r.metric == "device_us")
    assert best.geomean == 1.5  # over QuACK's 20 us, not eager's 60


@pytest.fixture
def fake_family(monkeypatch, worker):
    """quack's candidates replaced: one that cannot import, one that disagrees, one that runs
    on a prepared layout and is checked against its own answer."""
    peers = worker.peers
    seen = []

    def missing():
        raise ModuleNotFoundError("No module named 'quack'")

    def wrong():
        return lambda args: peers.Prepared(lambda x: x * 2, list(args))

    def right():
        def bind(args):
            (x,) = args
            if x.shape[0] > 2:
                raise ValueError("refuses more than 2 rows")
            seen.append(x.shape)
            flipped = x.flip(-1).contiguous()  # the peer's own layout
            return peers.Prepared(lambda y: y.flip(-1), [flipped], x.clone(), "rows flipped")

        return bind

    candidates = [("a.missing", missing), ("a.wrong", wrong), ("a.right", right)]
    monkeypatch.setattr(peers, "candidates", lambda group, op: candidates)
    return seen


def softmax_answer(worker, x: torch.Tensor):
    """The worker's answer for softmax on x: eager's, per element within PEER_TOLERANCE."""
    shape = BenchShape(name="t", dims={"rows": x.shape[0], "cols": x.shape[1]}, dtype="float32")
    return worker.Answer(load_spec("softmax"), shape, torch.softmax(x, -1), [x])


def test_a_family_api_is_the_first_that_runs_and_agrees(worker, fake_family) -> None:
    x = torch.randn(2, 8)
    impl = worker.peer_impl("quack", "softmax", [x], softmax_answer(worker, x))
    assert impl.api == "a.right" and impl.error is None and impl.bind is not None
    shaped, args, answer = worker.bound(impl, [x], softmax_answer(worker, x))
    # The shape's call is the peer's on its own layout, checked against its own answer.
    assert shaped.api == "a.right (rows flipped)" and shaped.bind is None
    assert torch.equal(args[0], x.flip(-1)) and torch.equal(answer.expected, x)
    assert answer.wrong(shaped.fn(*args)) is None
    assert "entries off" in answer.wrong(shaped.fn(*args) + 0.1)


def test_a_shape_a_family_refuses_is_that_shapes_error(worker, fake_family) -> None:
    x = torch.randn(2, 8)
    impl = worker.peer_impl("quack", "softmax", [x], softmax_answer(worker, x))
    wide = torch.randn(5, 8)
    shaped, args, answer = worker.bound(impl, [wide], softmax_answer(worker, wide))
    assert shaped.fn is None and shaped.error == "ValueError: refuses more than 2 rows"
    figures, call = worker.measure(shaped, args, answer)
    assert figures == {"error": "ValueError: refuses more than 2 rows"} and call is None


def test_no_api_of_a_family_runs_every_reason_is_kept(worker, monkeypatch) -> None:
    def broken():
        raise ImportError("libcute_dsl_runtime.so: cannot open shared object file")

    monkeypatch.setattr(worker.peers, "candidates", lambda g, op: [("q.fwd", broken)] * 2)
    x = torch.randn(2, 8)
    impl = worker.peer_impl("quack", "softmax", [x], softmax_answer(worker, x))
    assert impl.fn is None and impl.bind is None
    assert impl.error.count("ImportError: libcute_dsl_runtime.so") == 2
    monkeypatch.setattr(worker.peers, "candidates", lambda g, op: [])
    assert worker.peer_impl("quack", "topk", [x], None).error == "quack has no topk"


def test_a_half_imported_sglang_gives_each_shape_the_same_cause(tmp_path, monkeypatch) -> None:
    # SGLang's package runs its server's utilities on import; where one of their modules is
    # missing, the import fails part-way, and the next shape's must fail the same way (with what
    # was not staged), not on the half-run packages the first left behind.
    package = tmp_path / "sglang"
    (package / "srt" / "utils").mkdir(parents=True)
    (package / "__init__.py").write_text("from sglang.srt.utils import common\n")
    (package / "srt" / "__init__.py").write_text("")
    (package / "srt" / "utils" / "__init__.py").write_text("")
    (package / "srt" / "utils" / "common.py").write_text("import orjson_not_staged_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    script("bench_library")  # puts scripts/ on the path for the peers package
    sglang = importlib.import_module("peers.sglang")
    for _ in range(2):
        with pytest.raises(ModuleNotFoundError, match="orjson_not_staged_here.*sglang-kernel"):
            sglang._fused_experts()
    assert not [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]


def test_a_peer_is_held_to_the_operators_own_rule_on_the_problem_it_computes(worker) -> None:
    # torch._scaled_mm computes the rowwise-requantized GEMM, so its binder poses that problem
    # in fp8_gemm's form, and fp8_gemm's rule judges it: its bound follows the operands' scale
    # (a near-zero sum may be off by more than a bf16 step of itself), which an elementwise
    # tolerance does not. That only holds while the peer is given the problem it computes.
    script("bench_library")  # puts scripts/ on the path for the peers package
    scaled_mm = importlib.import_module("peers.scaled_mm")
    spec = load_spec("fp8_gemm")
    shape = BenchShape(name="t", dims={"M": 32, "N": 256, "K": 1024}, dtype="float32")
    args = make_inputs(spec, shape, "float32", "normal", 1, "cpu")
    call = scaled_mm._rowwise()(args)
    answer = worker.Answer(spec, shape, spec.eager(*args), args).of(call)
    assert answer.expected is call.expected and answer.posed is call.posed
    assert answer.wrong(call.expected) is None
    allowed = spec.module.bound(call.expected.double(), call.posed).view(-1)
    near_zero = int(call.expected.float().abs().argmin())
    assert 1.5 * allowed[near_zero] < worker.PEER_TOLERANCE.atol  # the case this test needs
    nudged = call.expected.clone().view(-1)
    nudged[near_zero] += allowed[near_zero] / 2
    nudged = nudged.view(call.expected.shape)
    assert answer.wrong(nudged) is None
    nudged.view(-1)[near_zero] += allowed[near_zero]  # 1.5 times fp8_gemm's bound there
    assert "2^-5*sqrt(sum_k (a_k*b_k)^2)" in answer.wrong(nudged)
    # Per element, it is within bf16 rounding's order: only the operator's rule sees it.
    assert worker.replace(answer, posed=None).wrong(nudged) is None


def test_a_peer_is_timed_at_its_own_precision(worker) -> None:
    # A serving peer that rounds an intermediate to bf16 is off by bf16's order near zero,
    # which the pipeline bench's re-check (twice the verifier's tolerance) would reject: the
    # library bench keeps its figure, the speed to beat, and rejects what is further off.
    from kernelgen.bench.worker import disagreement

    x = torch.randn(4, 64)
    answer = softmax_answer(worker, x)
    rounded = answer.expected + 0.01
    assert answer.wrong(rounded) is None
    assert disagreement(answer.spec, answer.shape, rounded, answer.expected, None) is not None
    assert answer.wrong(answer.expected + 0.1) is not None
    nan = answer.expected.clone()
    nan[1, 3] = float("nan")
    assert "NaN" in answer.wrong(nan)
