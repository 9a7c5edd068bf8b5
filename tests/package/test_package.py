"""Promotion into generated/kernelgen_ops: what it writes, what it refuses, and that the library
is whole (old or new) whatever happens half-way."""

import json
import os
import shutil
from pathlib import Path

import pytest

from kernelgen import package, store
from kernelgen.bench.library import LibraryBench, Measurement
from kernelgen.package import (
    ManifestEntry,
    PromoteError,
    Provenance,
    promote,
    promote_from_run,
    sha256,
)
from kernelgen.package import library as building
from kernelgen.package.peers import best_peer
from kernelgen.records import (
    BenchRecord,
    Budget,
    CandidateRecord,
    CaseResult,
    Ceilings,
    Environment,
    PeerTime,
    RunRecord,
    RunSettings,
    ShapeTiming,
    Verdict,
)
from kernelgen.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
H200 = "NVIDIA H200"
TUNED_SOFTMAX = (
    (REPO / "seeds" / "softmax.py")
    .read_text()
    .replace(
        "TUNED: dict[str, dict[str, int]] = {}",
        'TUNED: dict[str, dict[str, int]] = {\n    "4096x4096": {"num_warps": 8},\n}',
    )
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the real references, seeds and library, in a temporary folder."""
    for folder in ("references", "seeds"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    shutil.copytree(
        REPO / "generated" / "kernelgen_ops",
        tmp_path / "generated" / "kernelgen_ops",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _library(project: Path) -> Path:
    return project / "generated" / "kernelgen_ops"


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _leftovers(project: Path) -> list[str]:
    return [p.name for p in (project / "generated").iterdir() if p.name.startswith(".")]


def _measured(op: str, source: str, **over: object) -> Provenance:
    fields: dict = dict(
        op=op,
        source=f"evaluations/{op}/run-1/candidates/r1-c0/source.py",
        run_id="run-1",
        candidate_id="r1-c0",
        record=f"evaluations/{op}/run-1/candidates/r1-c0/record.json",
        proposer="llm",
        model="some-model",
        round=1,
        parent="seed",
        device=H200,
        triton="3.6.0",
        torch="2.11.0",
        speedups=[
            package.ShapeSpeedup(
                shape="4096x4096",
                dtype="bfloat16",
                median_us=12.5,
                eager=1.5,
                compile=1.2,
                seed=2.0,
            )
        ],
        geomean_eager=1.5,
        geomean_compile=1.2,
        geomean_seed=2.0,
        sha256=sha256(source),
    )
    fields.update(over)
    return Provenance(**fields)


def test_promote_writes_module_configs_manifest_and_init(project: Path) -> None:
    before = json.loads((_library(project) / "MANIFEST.json").read_text())
    library = promote("softmax", TUNED_SOFTMAX, None, _measured("softmax", TUNED_SOFTMAX))
    assert library == _library(project)
    module = (library / "softmax.py").read_text()
    header = module.split('"""')[0]
    for fact in (
        "evaluations/softmax/run-1/candidates/r1-c0/record.json",
        "llm",
        "some-model",
        H200,
        "1.50x vs eager",
        # The headline: the faster peer of the record at its one shape, torch.compile here.
        "best peer 1.20x geomean over 1 shape, each against the fastest peer measured there",
        "4096x4096 bfloat16: 1.20x vs torch.compile",
        "eager = references/softmax.py:softmax, which is how torch users compute it",
        "4096x4096 bfloat16",
        sha256(TUNED_SOFTMAX),
    ):
        assert fact in header, fact
    assert 'TUNED = _runtime.tuned("softmax")' in module
    assert 'DEFAULT_CONFIG = _runtime.default_config("softmax")' in module
    assert "from . import _runtime" in module
    assert "_softmax_kernel" in module and '"4096x4096": {"num_warps": 8}' not in module
    assert module.endswith(package.LEAN_LAUNCHES)  # its kernels launch lean

    configs = json.loads((library / "configs" / "softmax.json").read_text())
    assert configs["devices"] == {f"{H200}|triton-3.6.0": {"4096x4096": {"num_warps": 8}}}
    # eager 1.5x on the one shape measured (an older record: the eager time is derived)
    assert configs["dispatch"] == {
        f"{H200}|triton-3.6.0": {
            "4096x4096": {
                "shape": "4096x4096",
                "kernel_us": 12.5,
                "torch_us": 18.75,
                "torch_device_us": 18.75,
                "kernel_device_us": 12.5,
                "host_included": False,
                "kernel": True,
            }
        }
    }
    assert configs["default"] == {"num_warps": 4} and configs["sha256"] == sha256(TUNED_SOFTMAX)

    manifest = json.loads((library / "MANIFEST.json").read_text())
    entry = manifest["ops"]["softmax"]
    assert entry["measured"] is True and entry["tuned_on"] == [f"{H200}|triton-3.6.0"]
    # The torch entry points its spec declares, for the library's routes to be made from.
    assert [r["function"] for r in entry["routes"]] == [
        "torch.softmax",
        "torch.nn.functional.softmax",
        "torch.Tensor.softmax",
    ]
    assert entry["routes"][0]["args"]["input"] == {"takes": "input", "kernel": "x", "value": None}
    # The others are kept (read and written back as records: fields added since have defaults).
    kept = ManifestEntry.model_validate(before["ops"]["rms_norm"]).model_dump(mode="json")
    assert manifest["ops"]["rms_norm"] == kept
    init = (library / "__init__.py").read_text()
    assert "llm run run-1/r1-c0 on NVIDIA H200, 1.20x vs the best peer" in init
    assert "vs eager" not in init
    # Every name in __all__, one a line once the list is past 100 columns.
    listed = init.split("__all__ = [", 1)[1].split("]", 1)[0]
    assert [n.strip(' ",') for n in listed.replace("\n", ",").split(",") if n.strip(' ",')] == (
        sorted(manifest["ops"])
    )
    assert all(len(line) <= 100 for line in init.splitlines())
    assert _leftovers(project) == []


UNTUNED = '''"""A softmax without tables: nothing to load from configs/, a kernel to launch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rows_kernel(y_ptr, x_ptr, n_cols, stride_xm, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols, other=-float("inf"))
    num = tl.exp(x.to(tl.float32) - tl.max(x.to(tl.float32), axis=0))
    tl.store(y_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    y = torch.empty_like(x2)
    block = triton.next_power_of_2(x2.shape[1])
    _rows_kernel[(x2.shape[0],)](y, x2, x2.shape[1], x2.stride(0), BLOCK=block)
    return y.view(x.shape)
'''


def test_a_source_without_tables_still_launches_lean(project: Path) -> None:
    prov = _measured("softmax", UNTUNED, speedups=None)
    library = promote("softmax", UNTUNED, None, prov)  # the import check runs the last line
    body = (library / "softmax.py").read_text().split("# fmt: off\n", 1)[1]
    # The judged source, plus the import the last line needs, after the source's own imports.
    imports = "import triton.language as tl\n"
    want = UNTUNED.replace(imports, imports + "\nfrom . import _runtime\n", 1)
    assert body == want + package.LEAN_LAUNCHES


def test_the_dispatch_table_counts_host_time_per_call() -> None:
    """A kernel faster on the device but slower to launch loses where launching dominates."""
    speed = package.ShapeSpeedup
    prov = _measured(
        "softmax",
        "x",
        speedups=[
            speed(shape="4096x4096", dtype="bfloat16", median_us=12.0, eager_us=20.0,
                  host_us=15.0, eager_host_us=8.0),
            speed(shape="mixtral_8x7b_1x32000", dtype="bfloat16", median_us=3.0, eager_us=5.0,
                  host_us=27.0, eager_host_us=7.0),
            speed(shape="gone", dtype="bfloat16", median_us=3.0, eager_us=5.0),
            # a tie (by less than the margin) is torch's; recorded before shapes were named by
            # model, under the name mixtral_8x7b_16x32000 had then (BenchShape.was)
            speed(shape="16x32000", dtype="bfloat16", median_us=5.9, eager_us=13.47,
                  host_us=13.3, eager_host_us=13.5),
        ],
    )  # fmt: skip
    table = package.dispatch_table("softmax", prov)
    assert set(table) == {"4096x4096", "1x32768", "16x32768"}  # "gone": no bench shape of the spec
    assert not table["16x32768"]["kernel"] and table["16x32768"]["kernel_us"] == 13.3
    assert table["4096x4096"]["kernel"] and table["4096x4096"]["kernel_us"] == 15.0
    assert not table["1x32768"]["kernel"] and table["1x32768"]["torch_us"] == 7.0
    assert package.dispatch_table("softmax", prov.model_copy(update={"speedups": None})) == {}


def test_the_shipped_tables_follow_the_dispatch_rule() -> None:
    """Every dispatch row the library ships says kernel exactly where the kernel won by the
    margin (generated/tests checks only that it never takes a shape it lost)."""
    import kernelgen_ops

    shipped = Path(kernelgen_ops.__file__).parent / "configs"
    rows = 0
    for path in sorted(shipped.glob("*.json")):
        for table in json.loads(path.read_text()).get("dispatch", {}).values():
            for row in table.values():
                won = row["kernel_us"] < row["torch_us"] * (1 - package.DISPATCH_MARGIN)
                assert row["kernel"] == won, (path.name, row)
                rows += 1
    assert rows > 0


def test_the_shipped_tables_are_their_provenance_s() -> None:
    """Each operator's shipped dispatch rows are what dispatch_table makes of the provenance in
    MANIFEST.json, every field of them (torch's device time included, which routed calls weigh):
    a table is derived from its record, never edited by hand.

    A spec whose bench shapes changed dims since the promotion (decode_attn's at the models'
    heads and pages, sparse_attn's at DeepSeek's MLA widths) no longer says which bucket an old
    shape keys: the library keeps those rows, measured evidence at their buckets, until the
    operator is measured and promoted again. Each such row is still its record's, field by
    field (dispatch_row of the speedup it names), and each stands where no row of a shape the
    spec still benches does."""
    library = REPO / "generated" / "kernelgen_ops"
    manifest = package.load_manifest(library)
    checked = 0
    for op, entry in manifest.ops.items():
        fields = {k: getattr(entry, k) for k in package.Provenance.model_fields}
        prov = package.Provenance(**fields)
        table = package.dispatch_table(op, prov)
        shipped = json.loads((library / "configs" / f"{op}.json").read_text())["dispatch"]
        if not shipped:
            assert table == {}, op
            continue
        (key, rows), *others = shipped.items()
        assert not others and key == package.device_key(entry.device, entry.triton), op
        spec = load_spec(op)
        current = {k: r for k, r in rows.items() if spec.data.bench_named(r["shape"])}
        assert current == table, op
        measured = {s.shape: s for s in prov.speedups}
        for bucket, row in rows.items():
            if bucket not in current:
                assert row == package.dispatch_row(measured[row["shape"]]), (op, bucket)
                assert bucket not in table, (op, bucket)
        checked += 1
    assert checked >= 2


def test_host_time_decides_only_at_launch_bound_shapes() -> None:
    """rms_norm qwen3_8b_4096x4096 on the H200: 18.6 us on the device against eager's 24.3,
    but 39.9 us of host time against eager's 26.2 (Triton's launch path). Memory-bound, so the
    device decides; at a launch-bound shape the host still does."""
    speed = package.ShapeSpeedup
    prov = _measured(
        "rms_norm",
        "x",
        speedups=[
            speed(shape="qwen3_8b_4096x4096", dtype="bfloat16", median_us=18.6, eager_us=24.3,
                  host_us=39.9, eager_host_us=26.2, bound="memory"),
            speed(shape="qwen3_8b_1x4096", dtype="bfloat16", median_us=2.2, eager_us=7.9,
                  host_us=26.3, eager_host_us=10.7, bound="launch"),
        ],
    )  # fmt: skip
    table = package.dispatch_table("rms_norm", prov)
    big, small = table["4096x4096"], table["1x4096"]
    assert big["kernel"] and not big["host_included"] and big["kernel_us"] == 18.6
    assert not small["kernel"] and small["host_included"] and small["kernel_us"] == 26.3
    # What a call costs inside a CUDA graph, where the library decides by device time alone.
    assert (big["kernel_device_us"], small["kernel_device_us"]) == (18.6, 2.2)
    assert small["torch_device_us"] == 7.9


def test_promote_again_re_derives_from_the_manifest(project: Path) -> None:
    """The shipped kernel promoted again from its manifest entry: the dispatch table is derived
    anew (here: a row of an older library, without the kernel's device time, gets it back);
    the module, the manifest (its promotion date included) and the tuned configs are the same."""
    prov = _measured("softmax", TUNED_SOFTMAX)
    source = project / prov.source
    source.parent.mkdir(parents=True)
    source.write_text(TUNED_SOFTMAX)
    library = promote("softmax", TUNED_SOFTMAX, None, prov, check_import=False)
    configs = library / "configs" / "softmax.json"
    before = _snapshot(library)
    older = json.loads(configs.read_text())
    for table in older["dispatch"].values():
        for row in table.values():
            del row["kernel_device_us"]
    configs.write_text(json.dumps(older))
    assert package.promote_again("softmax") == library
    assert _snapshot(library) == before
    assert not _leftovers(project)

    source.unlink()
    with pytest.raises(PromoteError, match=r"MANIFEST.json: ops.softmax.source: no file .*source"):
        package.promote_again("softmax")
    with pytest.raises(PromoteError, match="no 'gelu' in ops"):
        package.promote_again("gelu")
    configs.write_text("[1]")
    source.write_text(TUNED_SOFTMAX)
    with pytest.raises(PromoteError, match="softmax.json: expected a JSON object, got list"):
        package.promote_again("softmax")


def test_an_unmeasured_seed_says_so(project: Path) -> None:
    source = (project / "seeds" / "rms_norm.py").read_text()
    prov = Provenance(
        op="rms_norm", source="seeds/rms_norm.py", proposer="seed", sha256=sha256(source)
    )
    library = promote("rms_norm", source, None, prov, check_import=False)
    assert "NOT MEASURED" in (library / "rms_norm.py").read_text().split('"""')[0]
    entry = json.loads((library / "MANIFEST.json").read_text())["ops"]["rms_norm"]
    assert entry["measured"] is False and entry["speedups"] is None and entry["device"] is None
    # No evidence to route by: its routed calls would all keep torch's op.
    assert entry["routes"] == []


def test_the_shipped_routes_are_the_spec_s() -> None:
    """Each measured operator's routes in MANIFEST.json are what its spec declares (routing is
    declared in references/, never edited in the library); an unmeasured one has none."""
    manifest = package.load_manifest(REPO / "generated" / "kernelgen_ops")
    for op, entry in manifest.ops.items():
        declared = load_spec(op).data.routes if entry.measured else []
        assert entry.routes == declared, op
    assert {op for op, e in manifest.ops.items() if e.routes} >= {"softmax", "rms_norm"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s.replace('"self": {"takes": "input", "kernel": "x"}', '"self": '
                                '{"takes": "input", "kernel": "y"}'),
            r"routes\[2\] \(torch.Tensor.softmax\): passes \['y'\] to the kernel; expected each "
            r"of \['x'\] once",
        ),
        (
            lambda s: s.replace('"function": "torch.Tensor.softmax"',
                                '"function": "torch.Tensor.softmaks"'),
            r"routes\[2\] \(torch.Tensor.softmaks\): no such torch function",
        ),
        (
            lambda s: s.replace('"bucket": ["rows", "cols"]', '"bucket": ["cols", "rows"]'),
            r"keyed by its input's rows and last dimension; SPEC.bucket \['cols', 'rows'\]",
        ),
    ],
)  # fmt: skip
def test_promote_refuses_routes_that_do_not_fit_the_kernel(
    project: Path, change, message: str
) -> None:
    reference = project / "references" / "softmax.py"
    reference.write_text(change(reference.read_text()))
    before = _snapshot(_library(project))
    with pytest.raises(PromoteError, match=message):
        promote(
            "softmax", TUNED_SOFTMAX, None, _measured("softmax", TUNED_SOFTMAX), check_import=False
        )
    assert _snapshot(_library(project)) == before


def _library_bench(created: str, gpu: str = H200) -> LibraryBench:
    """A library bench record of softmax: at 4096x4096 Liger beat the kernel (the run's record
    had only eager and torch.compile), and a decode shape the run did not time."""
    times = {
        "4096x4096": {"kernelgen_ops[kernel]": 10.0, "eager": 15.0, "compile": 12.0, "liger": 9.0},
        "64x32000": {"kernelgen_ops[kernel]": 5.0, "eager": 10.0, "flaggems": 6.0},
    }
    return LibraryBench(
        created=created,
        command="scripts/bench_library.py",
        budget_s=60.0,
        environment={"gpu": gpu},
        measurements=[
            Measurement(op="softmax", shape=shape, dims={}, dtype="bfloat16",
                        decode=shape.startswith("64x"), impl=impl, device_us=us)
            for shape, by_impl in times.items()
            for impl, us in by_impl.items()
        ],
        complete=True,
    )  # fmt: skip


def test_the_best_peer_takes_the_library_bench_where_it_measured_this_kernel(
    project: Path,
) -> None:
    """Per shape the fastest peer, each figure a ratio within its own record: the library
    bench's Liger where it did better against the kernel than the run's peers did, and the
    shapes only it timed; a record of another GPU, or from before the promotion, timed some
    other kernel and counts for nothing."""
    prov = _measured("softmax", TUNED_SOFTMAX, promoted="2026-12-04T10:00:00+00:00")
    folder = project / "evaluations" / "library"
    folder.mkdir(parents=True)
    for name, created, gpu in [
        ("bench-a.json", "2026-12-04T09:00:00+00:00", H200),  # before the promotion
        ("bench-b.json", "2026-12-04T11:00:00+00:00", "NVIDIA H100"),  # another GPU
    ]:
        (folder / name).write_text(_library_bench(created, gpu).model_dump_json())
        found = best_peer("softmax", prov)
        assert found is not None and found.library is None
        assert [(f.shape, f.peer, f.speedup) for f in found.shapes] == [
            ("4096x4096", "compile", 1.2)
        ]
    (folder / "bench-c.json").write_text(
        _library_bench("2026-12-04T12:00:00+00:00").model_dump_json()
    )
    found = best_peer("softmax", prov)
    assert found is not None and found.library == "evaluations/library/bench-c.json"
    assert [(f.shape, f.peer, f.speedup, f.source) for f in found.shapes] == [
        ("4096x4096", "liger", 0.9, "library"),
        ("64x32000", "flaggems", 1.2, "library"),
    ]
    assert found.geomean == pytest.approx((0.9 * 1.2) ** 0.5)
    library = promote("softmax", TUNED_SOFTMAX, None, prov, check_import=False)
    header = (library / "softmax.py").read_text().split('"""')[0]
    assert "best peer 1.04x geomean over 2 shapes" in header
    assert "evaluations/library/bench-c.json" in header
    assert "4096x4096 bfloat16: 0.90x vs Liger (library bench)" in header
    entry = json.loads((library / "MANIFEST.json").read_text())["ops"]["softmax"]
    assert entry["best_peer"]["library"] == "evaluations/library/bench-c.json"
    unmeasured = Provenance(**(prov.model_dump() | {"speedups": None}))
    assert best_peer("softmax", unmeasured) is None
    # A newer record of another GPU does not hide this GPU's.
    (folder / "bench-d.json").write_text(
        _library_bench("2026-12-04T13:00:00+00:00", "NVIDIA H100").model_dump_json()
    )
    again = best_peer("softmax", prov)
    assert again is not None and again.library == "evaluations/library/bench-c.json"


def test_the_shipped_headlines_are_against_the_best_peer() -> None:
    """Each measured operator's best_peer in MANIFEST.json is what best_peer() derives from its
    provenance and the newest library bench record, and its headline is that figure."""
    library = REPO / "generated" / "kernelgen_ops"
    manifest = package.load_manifest(library)
    init = (library / "__init__.py").read_text()
    for op, entry in manifest.ops.items():
        fields = {k: getattr(entry, k) for k in package.Provenance.model_fields}
        assert entry.best_peer == best_peer(op, package.Provenance(**fields)), op
        if entry.best_peer is not None:
            assert f"{entry.best_peer.geomean:.2f}x vs best peer" in init, op
    assert "vs eager" not in init


def test_render_init_matches_the_committed_library() -> None:
    # __init__.py is generated: the committed one is what the template gives for its manifest.
    library = REPO / "generated" / "kernelgen_ops"
    manifest = package.load_manifest(library)
    assert package.render_init(manifest) == (library / "__init__.py").read_text()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.replace("def softmax(x", "def softmax(inp"), "differs from the reference"),
        (lambda s: s.replace("def softmax(x", "def soft_max(x"), "no top-level function"),
        (lambda s: s + "\ndef broken(:\n", "line"),
        (lambda s: s.replace("_config(*dims", "_runtime(*dims"), "uses the name _runtime"),
    ],
)
def test_promote_refuses_bad_sources(project: Path, change, message: str) -> None:
    source = change(TUNED_SOFTMAX)
    before = _snapshot(_library(project))
    with pytest.raises(PromoteError, match=message):
        promote("softmax", source, None, _measured("softmax", source), check_import=False)
    assert _snapshot(_library(project)) == before


def test_promote_refuses_inconsistent_provenance(project: Path) -> None:
    with pytest.raises(PromoteError, match="sha256"):
        promote("softmax", TUNED_SOFTMAX, None, _measured("softmax", TUNED_SOFTMAX + "#"))
    with pytest.raises(PromoteError, match="provenance is for 'rms_norm'"):
        promote("softmax", TUNED_SOFTMAX, None, _measured("rms_norm", TUNED_SOFTMAX))
    seedish = _measured("softmax", TUNED_SOFTMAX, device=None, speedups=None)
    with pytest.raises(PromoteError, match="needs the device it was tuned on"):
        promote("softmax", TUNED_SOFTMAX, None, seedish)
    untuned = TUNED_SOFTMAX.replace("TUNED: dict[str, dict[str, int]] =", "_T =")
    with pytest.raises(PromoteError, match="no literal TUNED table"):
        promote("softmax", untuned, {"x|triton-1": {"1x1": {}}}, _measured("softmax", untuned))


def test_an_operator_needs_its_contract(project: Path) -> None:
    (project / "references" / "gelu.py").write_text(
        '"""gelu(x)."""\nimport torch\n\n\ndef gelu(x: torch.Tensor) -> torch.Tensor:\n'
        "    return torch.nn.functional.gelu(x)\n"
    )
    source = "import triton\n\n\ndef gelu(x):\n    return x\n"
    with pytest.raises(PromoteError, match="no check_gelu or fake_gelu or dims_gelu or torch_gelu"):
        promote("gelu", source, None, _measured("gelu", source), check_import=False)


def test_a_library_that_does_not_import_is_not_swapped_in(project: Path) -> None:
    source = TUNED_SOFTMAX + "\nraise RuntimeError('breaks at import')\n"
    before = _snapshot(_library(project))
    with pytest.raises(PromoteError, match="does not import: RuntimeError: breaks at import"):
        promote("softmax", source, None, _measured("softmax", source))
    assert _snapshot(_library(project)) == before
    assert _leftovers(project) == []


def test_an_interrupted_swap_leaves_the_old_library(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(_library(project))
    rename, calls = os.rename, []

    def interrupted(src: str, dst: str) -> None:
        calls.append(src)
        if len(calls) == 2:  # the new library into place
            raise KeyboardInterrupt
        rename(src, dst)

    monkeypatch.setattr(building.os, "rename", interrupted)
    with pytest.raises(KeyboardInterrupt):
        promote(
            "softmax", TUNED_SOFTMAX, None, _measured("softmax", TUNED_SOFTMAX), check_import=False
        )
    assert _snapshot(_library(project)) == before
    assert _leftovers(project) == []


def test_a_killed_swap_is_undone_by_the_next_promotion(project: Path) -> None:
    # kill -9 between the two renames: no library in place, the old one and the new one aside.
    library = _library(project)
    before = _snapshot(library)
    os.rename(library, library.with_name(".kernelgen_ops.old-dead"))
    shutil.copytree(
        library.with_name(".kernelgen_ops.old-dead"), library.with_name(".kernelgen_ops.new-dead")
    )
    package.recover(library)
    assert _snapshot(library) == before and _leftovers(project) == []


# ---------------------------------------------------------------- promote_from_run


def _environment(device: str = "cuda") -> Environment:
    gpu = H200 if device == "cuda" else None
    return Environment(
        device=device,
        gpu=gpu,
        torch="2.11.0",
        triton="3.6.0",
        python="3.11",
        host="h",
        interpreter=device == "cpu",
    )


def _bench(source: str, device: str = "cuda") -> BenchRecord:
    peer = PeerTime(median_us=10.0, spread=0.01)
    shape = ShapeTiming(
        shape="4096x4096",
        dtype="bfloat16",
        bytes=1,
        flops=1,
        candidate=peer,
        speedup_eager=1.4,
        speedup_compile=1.1,
        speedup_seed=2.5,
        gbps=1.0,
        tflops=0.0,
        limit_pct=50.0,
        floor_us=5.0,
        bound="memory",
    )
    ceilings = Ceilings(
        gpu=H200,
        copy_gbps=4000.0,
        bf16_tflops=900.0,
        launch_us=3.0,
        measured="now",
        torch="2.11.0",
        triton="3.6.0",
    )
    return BenchRecord(
        op="softmax",
        candidate="c",
        sha256=sha256(source),
        label="r1-c0",
        shapes=[shape],
        ceilings=ceilings,
        environment=_environment(device),
        geomean_eager=1.4,
        geomean_compile=1.1,
        geomean_seed=2.5,
    )


def _verdict(device: str, sanitized: list[str], not_run: bool = False) -> Verdict:
    return Verdict(
        op="softmax",
        candidate="source.py",
        sha256=sha256(TUNED_SOFTMAX),
        accepted=True,
        outcome="accepted-partial" if not_run else "accepted",
        device=device,  # type: ignore[arg-type]
        seed=1,
        seconds=1.0,
        cases=[
            CaseResult(name="one/float32/normal", status="passed"),
            CaseResult(name="big/bfloat16/normal", status="not_run" if not_run else "passed"),
        ],
        sanitized=sanitized,
    )


def _run(best: str | None, candidates: dict[str, dict], run_id: str = "run-1") -> str:
    settings = RunSettings(
        op="softmax", proposer="llm", model="m", device="cuda", budget=Budget(), seed=0
    )
    run = RunRecord(
        id=run_id,
        op="softmax",
        settings=settings,
        environment=_environment(),
        state="finished",
        best=best,
    )
    store.save_run(run)
    for cid, over in candidates.items():
        fields: dict = dict(
            id=cid,
            round=1,
            parent="seed",
            proposer="llm",
            model="m",
            status="accepted",
            sha256=sha256(TUNED_SOFTMAX),
            bench=_bench(TUNED_SOFTMAX),
            verdict=_verdict("cuda", sanitized=["memcheck", "racecheck"]),
        )
        fields.update(over)
        store.save_candidate("softmax", run_id, CandidateRecord(**fields), source=TUNED_SOFTMAX)
    return run.id


def test_promote_from_run_takes_the_best(project: Path) -> None:
    run_id = _run("r1-c0", {"r1-c0": {}})
    library = promote_from_run("softmax", run_id)
    entry = json.loads((library / "MANIFEST.json").read_text())["ops"]["softmax"]
    assert entry["run_id"] == "run-1" and entry["candidate_id"] == "r1-c0"
    assert entry["record"] == "evaluations/softmax/run-1/candidates/r1-c0/record.json"
    assert entry["geomean_seed"] == 2.5 and entry["device"] == H200
    assert entry["note"] is None  # judged nowhere else
    assert store.load_run("softmax", run_id).promoted


def test_a_source_judged_in_an_earlier_run_says_where(project: Path) -> None:
    """The same source resubmitted unchanged in a later run, to be measured again: promoted from
    that run, with a note naming the run that judged it first."""
    early = {"r1-c0": {"proposer": "tune", "created": "2026-12-01T08:00:00+00:00"}}
    _run("r1-c0", early, run_id="run-0")
    run_id = _run("r1-c0", {"r1-c0": {"created": "2026-12-03T13:00:00+00:00"}}, run_id="run-1")
    library = promote_from_run("softmax", run_id)
    entry = json.loads((library / "MANIFEST.json").read_text())["ops"]["softmax"]
    assert entry["run_id"] == "run-1"
    assert "first judged as tune run run-0/r1-c0" in entry["note"]
    header = (library / "softmax.py").read_text().split('"""')[0]
    assert "first judged as tune run run-0/r1-c0" in " ".join(header.replace("#", " ").split())


@pytest.mark.parametrize(
    ("best", "candidates", "chosen", "message"),
    [
        (None, {"r1-c0": {}}, None, "kept no candidate over the seed"),
        ("r1-c0", {"r1-c0": {}}, "r9-c9", "has no candidate 'r9-c9' \\(it has: r1-c0\\)"),
        (
            "r1-c0",
            {"r1-c0": {"status": "rejected", "category": "incorrect", "reason": "wrong"}},
            None,
            "was not accepted \\(rejected: incorrect: wrong\\)",
        ),
        ("r1-c0", {"r1-c0": {"bench": None}}, None, "no timings measured on CUDA"),
        ("r1-c0", {"r1-c0": {"bench": _bench(TUNED_SOFTMAX, "cpu")}}, None, "measured on CUDA"),
        ("r1-c0", {"r1-c0": {"sha256": "0" * 64}}, None, "changed since it was judged"),
        ("r1-c0", {"r1-c0": {"verdict": None}}, None, "has no verdict"),
        (
            "r1-c0",
            {"r1-c0": {"verdict": _verdict("cpu", ["memcheck"], not_run=True)}},
            None,
            "needs a CUDA verdict with every case run",
        ),
        (
            "r1-c0",
            {"r1-c0": {"verdict": _verdict("cuda", [])}},
            None,
            "not run under compute-sanitizer",
        ),
    ],
)
def test_promote_from_run_refuses(project: Path, best, candidates, chosen, message) -> None:
    run_id = _run(best, candidates)
    before = _snapshot(_library(project))
    with pytest.raises(PromoteError, match=message):
        promote_from_run("softmax", run_id, chosen)
    assert _snapshot(_library(project)) == before
    assert not store.load_run("softmax", run_id).promoted
