"""Create the first library from the seeds: honest placeholders until a GPU run replaces them.

    python scripts/bootstrap_library.py [OP ...]      (default: every seed)

Each seed is promoted with proposer "seed", no run and no measurements, so MANIFEST.json and the
module headers say plainly that nothing was measured; `kernelgen optimize OP` on a GPU followed by
`kernelgen promote OP --run RUN_ID` replaces it.
"""

from __future__ import annotations

import sys

from kernelgen import paths
from kernelgen.errors import KernelgenError
from kernelgen.package import Provenance, promote, sha256

NOTE = (
    "seed kernel, promoted without a run: NOT MEASURED; `kernelgen optimize OP` on a GPU, "
    "then `kernelgen promote OP --run RUN_ID` replaces it"
)


def bootstrap(ops: list[str]) -> None:
    for op in ops:
        path = paths.seeds_dir() / f"{op}.py"
        source = path.read_text()
        provenance = Provenance(
            op=op,
            source=str(path.relative_to(paths.root())),
            proposer="seed",
            sha256=sha256(source),
            note=NOTE,
        )
        library = promote(op, source, None, provenance)
        print(f"{op}: {path.relative_to(paths.root())} -> {library / (op + '.py')}")


def main(argv: list[str]) -> int:
    ops = argv or sorted(p.stem for p in paths.seeds_dir().glob("*.py"))
    try:
        bootstrap(ops)
    except KernelgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
