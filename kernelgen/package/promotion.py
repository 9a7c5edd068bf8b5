"""promote(): write any source into the library as an operator, with its provenance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kernelgen import paths, tuning
from kernelgen.package.dispatch import dispatch_table
from kernelgen.package.imported import MODULE, accepts, imported, origin, render_kernelbench
from kernelgen.package.init_module import render_init
from kernelgen.package.library import (
    check_hand_written,
    import_check,
    locked,
    new_folder,
    recover,
    swap,
    validate,
)
from kernelgen.package.manifest import (
    Configs,
    ImportedEntry,
    ManifestEntry,
    PromoteError,
    Provenance,
    device_key,
    load_manifest,
    sha256,
)
from kernelgen.package.module import rewrite_module
from kernelgen.package.peers import best_peer
from kernelgen.package.routes import declared_routes
from kernelgen.package.sources import (
    check_signature,
    literal_dict,
    parse,
    reference_api,
    tuning_tables,
)


def promote(
    op: str,
    source: str,
    configs: Configs | None,
    provenance: Provenance,
    *,
    library: Path | None = None,
    check_import: bool = True,
) -> Path:
    """Write `source` into the library as operator `op` and return the library folder.

    `configs` maps device keys ("NVIDIA H200|triton-3.6.0", see device_key) to bucket tables
    ({"4096x4096": {"num_warps": 8}}); None takes the source's own TUNED table, keyed by the
    provenance's device. Tables of an earlier source of `op` are dropped: they were tuned for
    another kernel.

    An imported problem (SPEC.origin) becomes kernelgen_ops.kernelbench.<op>: the kernel always,
    with neither dispatch table nor routes, and no hand-written contract (package/imported.py).
    """
    library = (library or paths.library_dir()).resolve()
    if provenance.op != op:
        raise PromoteError(f"provenance is for {provenance.op!r}, not {op!r}")
    if sha256(source) != provenance.sha256:
        raise PromoteError(f"{provenance.source}: sha256 differs from the provenance's")
    params, returns, summary = reference_api(op)
    where = provenance.source
    tree = parse(source, where)
    check_signature(tree, op, params, where)
    default, tuned = tuning_tables(source, where)
    if configs is None:
        configs = {}
        if tuned:
            if not (provenance.device and provenance.triton):
                raise PromoteError(f"{where}: a TUNED table needs the device it was tuned on")
            configs = {device_key(provenance.device, provenance.triton): tuned}
    if configs:
        node = tuning.assignment(tree, "TUNED")
        if node is None or literal_dict(node, "TUNED", where) is None:
            raise PromoteError(
                f"{where}: has no literal TUNED table to load the tuned configs into"
            )
    problem = imported(op)
    # The contract first (checked again under the lock): the dispatch table needs the spec.
    check_hand_written(library, op, contract=problem is None)
    dispatch = dispatch_table(op, provenance) if problem is None else {}
    best = best_peer(op, provenance)
    public = f"kernelgen_ops.{MODULE}.{op}" if problem is not None else None
    module = rewrite_module(op, source, provenance, dispatch, best, public)
    config_json = {"op": op, "sha256": provenance.sha256, "default": default, "devices": configs}
    fields = dict(
        **provenance.model_dump(),
        params=params,
        returns=returns,
        summary=summary,
        tuned_on=sorted(configs),
        best_peer=best,
    )
    entry = (
        ManifestEntry(**fields, routes=declared_routes(op, params, provenance))
        if problem is None
        else ImportedEntry(**fields, origin=origin(problem), accepts=accepts(problem))
    )

    library.parent.mkdir(parents=True, exist_ok=True)
    with locked(library.parent):
        recover(library)
        check_hand_written(library, op, contract=problem is None)
        # Where the kernel won, from the same record as the provenance (see _runtime).
        config_json["dispatch"] = (
            {device_key(provenance.device, provenance.triton): dispatch}
            if dispatch and provenance.device and provenance.triton
            else {}
        )
        manifest = load_manifest(library)
        if isinstance(entry, ImportedEntry):
            manifest.kernelbench[op] = entry
        else:
            manifest.ops[op] = entry
        new = new_folder(library)
        try:
            shutil.copytree(library, new, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            (new / f"{op}.py").write_text(module)
            (new / "configs").mkdir(exist_ok=True)
            (new / "configs" / f"{op}.json").write_text(_json(config_json))
            (new / "MANIFEST.json").write_text(manifest.model_dump_json(indent=2) + "\n")
            (new / "__init__.py").write_text(render_init(manifest))
            if manifest.kernelbench:
                (new / f"{MODULE}.py").write_text(render_kernelbench(manifest))
            validate(new)
            if check_import:
                import_check(new)
            swap(new, library)
        finally:
            shutil.rmtree(new, ignore_errors=True)
    return library


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
