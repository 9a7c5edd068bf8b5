"""`kernelgen promote OP --again`: the library's kernel promoted again from its own manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernelgen import paths
from kernelgen.package.manifest import PromoteError, Provenance, load_manifest
from kernelgen.package.promotion import promote


def promote_again(op: str, library: Path | None = None) -> Path:
    """Promote the library's kernel of `op` again from what its manifest records: the same source
    (found by its path, checked by its sha256), provenance, tuned configs and promotion date.
    What changes is only what promotion derives from them (the module's header, the dispatch
    table), after a change to how kernelgen derives it. Returns the library folder."""
    library = (library or paths.library_dir()).resolve()
    manifest = load_manifest(library)
    entry = manifest.ops.get(op) or manifest.kernelbench.get(op)
    if entry is None:
        raise PromoteError(
            f"{library / 'MANIFEST.json'}: no {op!r} in ops; nothing to promote again"
        )
    path = paths.root() / entry.source
    if not path.is_file():
        raise PromoteError(f"{library / 'MANIFEST.json'}: ops.{op}.source: no file {path}")
    fields = set(Provenance.model_fields)
    provenance = Provenance(**entry.model_dump(include=fields - {"measured"}))
    configs_path = library / "configs" / f"{op}.json"
    configs = _read_configs(configs_path).get("devices") if configs_path.is_file() else None
    return promote(op, path.read_text(), configs or None, provenance, library=library)


def _read_configs(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise PromoteError(f"{path}: unreadable ({e})") from None
    if not isinstance(data, dict):
        raise PromoteError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data
