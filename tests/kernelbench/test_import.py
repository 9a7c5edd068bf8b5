"""`kernelgen import kernelbench` on small problems in KernelBench's format, written here
(problems/levelN/ID_Title.py): each imported or refused for its reason, and an imported
reference that is the problem's Model, at the module's own init scale, reproducibly."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen.cli import app
from kernelgen.kernelbench import Imported, import_paths
from kernelgen.kernelbench.runtime import execute, overrides
from kernelgen.spec import Size, load_spec
from kernelgen.spec.inputs import make_inputs

PROBLEMS = Path(__file__).parent / "problems"
IMPORTED = {
    "kb1_1_softmax",
    "kb1_2_square_matmul",
    "kb1_3_cross_entropy",
    "kb2_1_gemm_biasadd_relu",
    "kb2_3_gemm_batchnorm",
    "kb2_4_conv2d_relu",
}
REFUSED = {
    "kb1_4_relu_inplace": "forward writes into its input 'x' (in place)",
    "kb2_2_matmul_noise": "forward draws random tensors",
    "kb2_5_gemm_max_subtract": "its output does not depend on its inputs",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An empty project with every problem under problems/ imported into it."""
    root = tmp_path_factory.mktemp("kb")
    (root / "references").mkdir()
    (root / "seeds").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KERNELGEN_ROOT", str(root))
        mp.chdir(root)
        results = import_paths([PROBLEMS])
        (root / "imported.json").write_text(json.dumps([r.model_dump() for r in results]))
        yield root


def _results(project: Path) -> dict[str, Imported]:
    rows = json.loads((project / "imported.json").read_text())
    return {r["op"]: Imported.model_validate(r) for r in rows}


def test_each_problem_is_imported_or_refused_for_its_reason(project: Path) -> None:
    results = _results(project)
    assert set(results) == IMPORTED | set(REFUSED)
    for op in IMPORTED:
        assert results[op].status == "imported", results[op].reason
        assert (project / "references" / f"{op}.py").is_file()
    for op, why in REFUSED.items():
        assert results[op].status == "refused" and why in (results[op].reason or "")
        assert not (project / "references" / f"{op}.py").exists()
    # No seed is written: torch eager is an imported operator's baseline.
    assert not any((project / "seeds").iterdir())


def _model_output(spec, size: Size, args: list) -> torch.Tensor:
    """The problem's own Model at this size, its state set to the drawn parameters, run as
    KernelBench runs it (training mode)."""
    plan = spec.module.PLAN
    ns = execute(spec.module.SOURCE, overrides(plan["constants"], size.dims), "problem")
    model = ns["Model"](*ns["get_init_inputs"]())
    n = len(plan["inputs"])
    state = model.state_dict()
    with torch.no_grad():
        for p, value in zip(plan["params"], args[n:], strict=True):
            state[p["state"]].copy_(value)
        return model(*args[:n])


@pytest.mark.parametrize(
    "op",
    ["kb1_1_softmax", "kb2_1_gemm_biasadd_relu", "kb1_3_cross_entropy", "kb2_3_gemm_batchnorm"],
)
def test_the_reference_is_the_models_forward(project: Path, op: str) -> None:
    spec = load_spec(op)
    cases = [c for c in spec.cases if c.interpreter]
    assert {c.size.name for c in cases} == {"small", "odd"}
    for case in cases:
        args = make_inputs(spec, case.size, case.dtype, case.dist, 5, "cpu")
        got = spec.reference(*args)
        want = _model_output(spec, case.size, args)
        assert torch.equal(got, want), case.name
        # The peer timed as torch eager: the Model called directly, holding the same tensors.
        assert spec.eager is not spec.reference and torch.equal(spec.eager(*args), want)
        # The judge's truth: the same forward on inputs upcast to float64.
        up = [a.double() if a.is_floating_point() else a for a in args]
        assert torch.allclose(spec.reference(*up).float(), want, rtol=1e-5, atol=1e-6)


def test_the_spec_holds_the_problem_its_sizes_and_its_origin(project: Path) -> None:
    spec = load_spec("kb2_1_gemm_biasadd_relu")
    d = spec.data
    source = (PROBLEMS / "level2" / "1_Gemm_BiasAdd_ReLU.py").read_text()
    assert d.origin is not None and d.origin.source == "kernelbench"
    assert (d.origin.level, d.origin.problem, d.origin.title) == (2, 1, "Gemm_BiasAdd_ReLU")
    assert d.origin.file == "level2/1_Gemm_BiasAdd_ReLU.py"
    assert d.origin.sha256 == hashlib.sha256(source.encode()).hexdigest()
    assert d.origin.cpu and not d.origin.convolution
    assert [(i.name, i.shape) for i in d.inputs] == [  # type: ignore[union-attr]
        ("x", ["batch_size", "in_features"]),
        ("linear_weight", ["out_features", "in_features"]),
        ("linear_bias", ["out_features"]),
    ]
    assert d.dtypes == ["float32"]
    problem = {"batch_size": 128, "in_features": 512, "out_features": 256}
    assert d.sizes[0].name == "problem" and d.sizes[0].dims == problem
    assert not d.sizes[0].interpreter
    assert [b.dims for b in d.bench] == [problem] and d.bench[0].dtype == "float32"
    for size in d.sizes[1:]:
        assert size.interpreter and all(size.dims[k] < problem[k] for k in ("in_features",))
    # Bytes of the inputs, the weights and the output; flops as FlopCounterMode counts a GEMM.
    b, k, n = 128, 512, 256
    assert spec.cost(problem, "float32").model_dump() == {
        "bytes": 4 * (b * k + n * k + n + b * n),
        "flops": 2 * b * k * n,
        "flops_at": "bf16",
    }


def test_parameters_come_from_the_init_under_the_case_seed(project: Path) -> None:
    spec = load_spec("kb2_1_gemm_biasadd_relu")
    case = next(c for c in spec.cases if c.size.name == "odd")
    k = case.size.dims["in_features"]
    _, w, bias = make_inputs(spec, case.size, case.dtype, case.dist, 11, "cpu")
    # nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)), std 1/sqrt(3 * in).
    bound = k**-0.5
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.9 * bound
    assert abs(float(w.std()) - (3 * k) ** -0.5) < 0.1 * (3 * k) ** -0.5
    assert float(bias.abs().max()) <= bound
    again = make_inputs(spec, case.size, case.dtype, case.dist, 11, "cpu")
    other = make_inputs(spec, case.size, case.dtype, case.dist, 12, "cpu")
    assert torch.equal(again[1], w) and not torch.equal(other[1], w)


def test_one_valued_parameters_are_drawn_around_their_value_and_updated_buffers_stay_inside(
    project: Path,
) -> None:
    spec = load_spec("kb2_3_gemm_batchnorm")
    plan = spec.module.PLAN
    assert plan["internal"] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [p["constant"] for p in plan["params"]] == [None, None, 1.0, 0.0]
    assert spec.arg_names == ["x", "linear_weight", "linear_bias", "bn_weight", "bn_bias"]
    case = next(c for c in spec.cases if c.interpreter)
    args = make_inputs(spec, case.size, case.dtype, case.dist, 3, "cpu")
    weight, bias = args[3], args[4]
    assert not torch.equal(weight, torch.ones_like(weight))
    assert abs(float(weight.mean()) - 1) < 0.05 and 0.05 < float(weight.std()) < 0.2
    assert abs(float(bias.mean())) < 0.05 and 0.05 < float(bias.std()) < 0.2
    # The running statistics are updated inside, on a fresh copy: two calls agree.
    assert torch.equal(spec.reference(*args), spec.reference(*args))


def test_integer_inputs_are_drawn_by_the_problem(project: Path) -> None:
    spec = load_spec("kb1_3_cross_entropy")
    assert any("targets: drawn by the problem" in n for n in spec.data.origin.notes)  # type: ignore[union-attr]
    assert spec.data.inputs[1].dtype == "int64"  # type: ignore[union-attr]
    for case in spec.cases:
        if not case.interpreter:
            continue
        logits, targets = make_inputs(spec, case.size, case.dtype, case.dist, 2, "cpu")
        assert targets.dtype == torch.int64 and logits.dtype == torch.float32
        assert 0 <= int(targets.min()) and int(targets.max()) < case.dims["num_classes"]
        assert float(logits.min()) < 0  # the judge's signed values, not the problem's randn


def test_a_convolution_is_marked_and_literal_dims_stay_literal(project: Path) -> None:
    spec = load_spec("kb2_4_conv2d_relu")
    origin = spec.data.origin
    assert origin is not None and origin.convolution and "runs a convolution" in origin.notes
    assert [i.shape for i in spec.data.inputs] == [  # type: ignore[union-attr]
        ["batch_size", 3, 64, 64],
        ["out_channels", 3, 3, 3],
        ["out_channels"],
    ]


def test_a_problem_whose_shapes_are_literals_is_gpu_only(tmp_path: Path, monkeypatch) -> None:
    level = tmp_path / "problems" / "level1"
    level.mkdir(parents=True)
    text = (PROBLEMS / "level1" / "1_Softmax.py").read_text()
    (level / "9_Softmax_literal.py").write_text(
        text.replace("torch.rand(batch_size, features)", "torch.rand(64, 3000)")
    )
    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    (result,) = import_paths([level])
    assert result.status == "imported" and result.cpu_cases == 0
    origin = load_spec("kb1_9_softmax_literal").data.origin
    assert origin is not None and not origin.cpu
    assert any(n.startswith("no CPU size:") for n in origin.notes)


def test_files_it_cannot_name_and_changed_references(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    loose = tmp_path / "1_Softmax.py"
    loose.write_text((PROBLEMS / "level1" / "1_Softmax.py").read_text())
    (result,) = import_paths([loose])
    assert result.status == "refused" and "folder named levelN" in (result.reason or "")
    softmax = PROBLEMS / "level1" / "1_Softmax.py"
    assert import_paths([softmax])[0].status == "imported"
    assert import_paths([softmax])[0].status == "unchanged"
    written = tmp_path / "references" / "kb1_1_softmax.py"
    written.write_text(written.read_text() + "\n# edited\n")
    again = import_paths([softmax])[0]
    assert again.status == "refused" and "--force" in (again.reason or "")
    assert import_paths([softmax], force=True)[0].status == "imported"


def test_the_commands_import_and_list(project: Path) -> None:
    runner = CliRunner()
    got = runner.invoke(app, ["import", "kernelbench", str(PROBLEMS)])
    assert got.exit_code == 1, got.output  # three refused
    lines = got.output.splitlines()
    assert any(line.startswith("unchanged  kb1_1_softmax (6 cases, 4 on CPU)") for line in lines)
    assert any(line.startswith("refused   kb2_2_matmul_noise: forward draws") for line in lines)
    assert "6 of 9 imported" in got.output
    listed = runner.invoke(app, ["ops", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.output.strip().splitlines()[-1])["ops"]}
    assert set(rows) == IMPORTED
    assert rows["kb1_1_softmax"]["seed"] is False
    assert (rows["kb1_1_softmax"]["cases"], rows["kb1_1_softmax"]["interpreter_cases"]) == (6, 4)
    assert rows["kb2_4_conv2d_relu"]["origin"] == "kernelbench L2/4 (convolution)"


def test_the_reference_is_safe_from_threads(project: Path) -> None:
    """The judge draws several cases' truths at once in threads, and forward() swaps each call's
    weights into one module per size: unguarded, calls of one size ran each other's weights."""
    from concurrent.futures import ThreadPoolExecutor

    spec = load_spec("kb2_3_gemm_batchnorm")
    size = next(s for s in spec.data.sizes if s.interpreter)
    sets = [make_inputs(spec, size, "float32", "normal", i, "cpu") for i in range(8)]
    sets = [[a.double() if a.is_floating_point() else a for a in args] for args in sets]
    alone = [spec.reference(*args) for args in sets]
    for _ in range(3):
        with ThreadPoolExecutor(8) as pool:
            together = list(pool.map(lambda args: spec.reference(*args), sets))
        assert all(torch.equal(a, t) for a, t in zip(alone, together, strict=True))


def test_seeded_draws_are_one_at_a_time() -> None:
    """The truth's threads draw several cases at once, and a problem's own draws (its init, its
    get_inputs) take torch's global generators: a second seeded block waits for the first, and
    each draws from its own seed."""
    import threading

    from kernelgen.kernelbench.runtime import seeded

    inside, go, second_done = threading.Event(), threading.Event(), threading.Event()
    drawn: dict[int, torch.Tensor] = {}

    def block(seed: int, wait: bool) -> None:
        with seeded(seed):
            if wait:
                inside.set()
                go.wait(10)
            drawn[seed] = torch.rand(8)
        if not wait:
            second_done.set()

    first = threading.Thread(target=block, args=(1, True))
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=block, args=(2, False))
    second.start()
    assert not second_done.wait(0.5), "a second seeded block ran inside the first"
    go.set()
    first.join()
    second.join()
    for seed in (1, 2):
        with seeded(seed):
            assert torch.equal(drawn[seed], torch.rand(8))


def test_the_library_status_leaves_imported_problems_to_their_own_report(project: Path) -> None:
    from kernelgen.report.status import known_ops
    from kernelgen.spec import known_ops as every_op

    assert IMPORTED <= set(every_op())  # kernelgen ops, the agent and the suite see them
    assert not IMPORTED & set(known_ops({}))  # the library's status page does not
