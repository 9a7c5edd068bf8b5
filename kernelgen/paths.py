"""Where the project's folders are: the nearest ancestor of the working directory holding
references/ and seeds/, unless KERNELGEN_ROOT names one."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from kernelgen.errors import UsageError


@cache
def _find_root(start: str, override: str | None) -> Path:
    if override:
        root = Path(override).resolve()
        if not (root / "references").is_dir():
            raise UsageError(f"KERNELGEN_ROOT={override}: no references/ folder there")
        return root
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / "references").is_dir() and (folder / "seeds").is_dir():
            return folder
    raise UsageError(
        f"no kernelgen project above {here}: expected folders references/ and seeds/ "
        "(run from the project, or set KERNELGEN_ROOT)"
    )


def root() -> Path:
    return _find_root(os.getcwd(), os.environ.get("KERNELGEN_ROOT"))


def references_dir() -> Path:
    return root() / "references"


def seeds_dir() -> Path:
    return root() / "seeds"


def generated_dir() -> Path:
    return root() / "generated"


def library_dir() -> Path:
    return generated_dir() / "kernelgen_ops"


def evaluations_dir() -> Path:
    return root() / "evaluations"


def triton_cache() -> Path:
    """Triton's compile cache for candidates, kept across runs (KERNELGEN_TRITON_CACHE names
    another). Its keys hash the kernel source and every compile option, so a kernel compiled
    for an earlier run is the same binary; candidates cannot write files (static rules)."""
    override = os.environ.get("KERNELGEN_TRITON_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "kernelgen" / "triton"


def bytecode_cache() -> Path:
    """Where sandboxed processes read and write the bytecode of what they import
    (PYTHONPYCACHEPREFIX). Where the installed packages carry none and cannot be written (the
    H200 image: a --no-compile install), every runner compiled torch's sources again, 5.5 s of
    its start (profiled). Shared by the runners like Triton's cache, and for the same reason
    safe: candidates cannot write files (static rules)."""
    return Path.home() / ".cache" / "kernelgen" / "pycache"
