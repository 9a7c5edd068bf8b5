"""What the library ships, as the reports read it: the per-op entries of
generated/kernelgen_ops/MANIFEST.json. A missing or odd file reads as nothing shipped, so that a
report or the status page still draws (promotion's own reader, kernelgen.package, is strict)."""

from __future__ import annotations

import json
from pathlib import Path

from kernelgen import paths


def read_manifest(path: Path | None = None) -> dict[str, dict]:
    """Per-op entries of MANIFEST.json; a missing or odd file means nothing is generated."""
    path = path or paths.library_dir() / "MANIFEST.json"
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if isinstance(raw, dict) and isinstance(raw.get("ops"), dict):
        raw = raw["ops"]
    if isinstance(raw, dict) and isinstance(raw.get("ops"), list):
        raw = {e.get("name") or e.get("op"): e for e in raw["ops"] if isinstance(e, dict)}
    if not isinstance(raw, dict):
        return {}
    return {str(k): v for k, v in raw.items() if k and isinstance(v, dict)}
