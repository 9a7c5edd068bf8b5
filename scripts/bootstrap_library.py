"""Fill the library with the seeds, until a GPU run's winner replaces them.

    python scripts/bootstrap_library.py [OP ...]           unmeasured seeds (default: every seed)
    python scripts/bootstrap_library.py --bench [OP ...]   seeds with their committed H200 record

Without --bench each seed is promoted with proposer "seed", no run and no measurements, so
MANIFEST.json and the module headers say plainly that nothing was measured. With --bench, the
latest `evaluations/<op>/bench-seed-*.json` (written by `kernelgen bench OP --seed` on a GPU) is
the evidence: the source promoted is the one that record measured, found by its sha256 in the
seed file or in the seed's git history, and the module carries the record's speedups.
`kernelgen optimize OP` on a GPU, then `kernelgen promote OP --run RUN_ID`, replaces it.
"""

from __future__ import annotations

import sys

from kernelgen import paths
from kernelgen.errors import KernelgenError
from kernelgen.package import (
    Provenance,
    promote,
    provenance_of_bench,
    seed_source_with_sha,
    sha256,
)
from kernelgen.records import BenchRecord
from kernelgen.spec import load_spec

NOTE = (
    "seed kernel, promoted without a run: NOT MEASURED; `kernelgen optimize OP` on a GPU, "
    "then `kernelgen promote OP --run RUN_ID` replaces it"
)
BENCH_NOTE = (
    "seed kernel (not optimized yet), verified on CUDA and timed by `kernelgen bench OP --seed` "
    "on the GPU named here; `kernelgen optimize OP` then `kernelgen promote` replaces it"
)


def _seed_provenance(op: str, with_bench: bool) -> tuple[str, Provenance]:
    path = paths.seeds_dir() / f"{op}.py"
    rel = str(path.relative_to(paths.root()))
    if not with_bench:
        source = path.read_text()
        return source, Provenance(
            op=op, source=rel, proposer="seed", sha256=sha256(source), note=NOTE
        )
    records = sorted((paths.evaluations_dir() / op).glob("bench-seed-*.json"))
    if not records:
        raise KernelgenError(
            f"{op}: no evaluations/{op}/bench-seed-*.json to take the "
            "timings from (run `kernelgen bench OP --seed` on a GPU)"
        )
    bench = BenchRecord.model_validate_json(records[-1].read_text())
    source = seed_source_with_sha(op, bench.sha256)
    note = BENCH_NOTE
    spec = load_spec(op)  # one load: each load makes new function objects
    if spec.eager is not spec.reference and bench.peers != "eager":
        # The record predates the reference's `eager` peer: its "eager" was the reference as
        # written, which can be far slower than what torch users call.
        note += (
            "; CAVEAT: this record's eager and torch.compile peers ran the reference as "
            f"written, not references/{op}.py:eager, so its x-eager figures overstate"
        )
    return source, provenance_of_bench(op, bench, records[-1], rel, source, note)


def main(argv: list[str]) -> int:
    with_bench = "--bench" in argv
    ops = [a for a in argv if a != "--bench"] or sorted(
        p.stem for p in paths.seeds_dir().glob("*.py")
    )
    try:
        for op in ops:
            source, provenance = _seed_provenance(op, with_bench)
            library = promote(op, source, None, provenance)
            print(
                f"{op}: {provenance.source} ({provenance.record or 'no record'}) -> "
                f"{library / (op + '.py')}"
            )
    except KernelgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
