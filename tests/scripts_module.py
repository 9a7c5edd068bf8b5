"""A script of scripts/ as a module, for the tests of the scripts that are not part of the
package (the library bench, its worker, the peers)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str) -> ModuleType:
    """scripts/<name>.py imported once and registered in sys.modules (its dataclasses need the
    module there), with scripts/ on the path for the packages it imports (peers, grids)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.append(str(SCRIPTS))
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec is not None and spec.loader is not None, name
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
