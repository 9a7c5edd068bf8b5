"""Promotion: write a candidate into the production library, generated/kernelgen_ops/.

    promote(op, source, configs, provenance)     any source, with the provenance it is shipped with
    promote_from_run(op, run_id, candidate_id)   an accepted, CUDA-measured candidate of a run
    promote_again(op)                            the library's kernel again, from its manifest

A promotion writes the operator's module (the candidate source under a provenance header, its
TUNED / DEFAULT_CONFIG tables turned into loads from configs/<op>.json, and a last line that makes
its kernels launch lean), the config JSON with its dispatch table, the MANIFEST.json entry and a
regenerated __init__.py. It builds the whole new library in a sibling folder, checks that it
compiles and imports, then swaps the folders.

One job a module:
    manifest      the records: Provenance, ManifestEntry, MANIFEST.json
    sources       what promotion reads of the reference and of a candidate
    header        a module's provenance header
    module        a module: the source, its config loads, lean launches
    init_module   the library's __init__.py
    dispatch      where the kernel beat torch's op per call (configs/<op>.json "dispatch")
    routes        the torch entry points the spec declares, checked against the kernel
    library       building the new library beside the old one and swapping them
    promotion     promote()
    imported      an imported problem's entry: kernelgen_ops.kernelbench (kernelbench.py)
    from_run      promotion from a run's candidate or a seed's bench record
    again         promote_again()
    catalog       what the project holds per operator (`kernelgen ops`, bench targets)

The library's hand-written files (_runtime.py, _launch.py, _plans.py, _calls.py, _contracts.py,
_routing.py) are carried over unchanged; _contracts.py must know an operator (check_<op>,
fake_<op>, dims_<op>, torch_<op>) before it can be promoted.
"""

from kernelgen.package.again import promote_again
from kernelgen.package.dispatch import DISPATCH_MARGIN, dispatch_row, dispatch_table
from kernelgen.package.from_run import (
    promote_from_run,
    provenance_of_bench,
    seed_source_with_sha,
)
from kernelgen.package.init_module import render_init
from kernelgen.package.library import recover
from kernelgen.package.manifest import (
    Manifest,
    ManifestEntry,
    PromoteError,
    Provenance,
    ShapeSpeedup,
    device_key,
    load_manifest,
    sha256,
)
from kernelgen.package.module import LEAN_LAUNCHES
from kernelgen.package.promotion import promote
from kernelgen.package.sources import reference_api, reference_summary

__all__ = [
    "DISPATCH_MARGIN",
    "LEAN_LAUNCHES",
    "Manifest",
    "ManifestEntry",
    "PromoteError",
    "Provenance",
    "ShapeSpeedup",
    "device_key",
    "dispatch_row",
    "dispatch_table",
    "load_manifest",
    "promote",
    "promote_again",
    "promote_from_run",
    "provenance_of_bench",
    "recover",
    "reference_api",
    "reference_summary",
    "render_init",
    "seed_source_with_sha",
    "sha256",
]
