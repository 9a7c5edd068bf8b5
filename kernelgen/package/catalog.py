"""What the project holds per operator: reference, seed, generated version, cases, shapes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from kernelgen import paths, store
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.spec import known_ops, load_spec, seed_path


def manifest() -> dict[str, Any]:
    path = paths.library_dir() / "MANIFEST.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        raise UsageError(f"{path}: not valid JSON") from None
    ops = data.get("ops", data) if isinstance(data, dict) else {}
    ops = ops if isinstance(ops, dict) else {}
    # Imported problems' kernels (kernelgen_ops.kernelbench) are the operators' peers here: each
    # is listed as generated and can be benched with --generated.
    imported = data.get("kernelbench") if isinstance(data, dict) else None
    return {**imported, **ops} if isinstance(imported, dict) else ops


def list_ops() -> list[dict[str, Any]]:
    """Every operator under references/, in name order. One whose reference does not load is
    listed too, with its one-line error and no counts: a malformed file hides only itself."""
    entries = manifest()
    rows = []
    for name in known_ops():
        entry = entries.get(name)
        generated = (paths.library_dir() / f"{name}.py").is_file()
        status = "no"
        if generated and isinstance(entry, dict):
            status = entry.get("proposer") or "yes"
        row: dict[str, Any] = {
            "name": name,
            "seed": seed_path(name).is_file(),
            "generated": generated,
            "generated_status": status,
            "cases": None,
            "interpreter_cases": None,
            "bench_shapes": [],
            "origin": None,
            "error": None,
        }
        try:
            spec = load_spec(name)
        except KernelgenError as e:
            row["error"] = str(e)
        else:
            row["cases"] = len(spec.cases)
            row["interpreter_cases"] = sum(c.interpreter for c in spec.cases)
            row["bench_shapes"] = [b.name for b in spec.data.bench]
            origin = spec.data.origin
            if origin is not None:  # an imported problem: where from, as its benchmark names it
                row["origin"] = f"{origin.source} L{origin.level}/{origin.problem}" + (
                    " (convolution)" if origin.convolution else ""
                )
        rows.append(row)
    return rows


def generated_source(op: str) -> tuple[str, Path]:
    """The evaluated source behind the library's kernel: the candidate file its manifest names,
    or the seed when the library still holds the seed."""
    entry = manifest().get(op)
    if not isinstance(entry, dict) or not (paths.library_dir() / f"{op}.py").is_file():
        raise UsageError(f"{op}: no generated version in {paths.library_dir()}")
    run_id, cand = entry.get("run_id"), entry.get("candidate_id")
    if run_id and cand:
        return "generated", store.candidate_path(op, run_id, cand)
    # The library holds a seed: the version of it that was promoted (by its sha256).
    from kernelgen.package import seed_source_with_sha

    source = seed_source_with_sha(op, str(entry.get("sha256")))
    path = Path(tempfile.mkdtemp(prefix="kernelgen-generated-")) / f"{op}.py"
    path.write_text(source)
    return "generated", path


def bench_target(op: str, file: Path | None, seed: bool, generated: bool) -> tuple[str, Path]:
    load_spec(op)
    chosen = sum([file is not None, seed, generated])
    if chosen != 1:
        raise UsageError("give exactly one of FILE, --seed or --generated")
    if seed:
        return "seed", seed_path(op)
    if generated:
        return generated_source(op)
    assert file is not None
    if not file.is_file():
        raise UsageError(f"{file}: no such file")
    return file.stem, file
