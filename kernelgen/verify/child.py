"""Entry point of a sandboxed process: `python -m kernelgen.verify.child module:function FOLDER`.

Reads the nonce from stdin before any untrusted code is imported, calls the target with the
request text, and writes {"nonce", "result"} atomically to FOLDER/result.json.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path


def main() -> None:
    target, folder = sys.argv[1], Path(sys.argv[2])
    nonce = sys.stdin.readline().strip()
    module_name, _, func_name = target.partition(":")
    func = getattr(importlib.import_module(module_name), func_name)
    result = func((folder / "request.json").read_text())
    tmp = folder / "result.json.tmp"
    tmp.write_text(json.dumps({"nonce": nonce, "result": result}))
    os.replace(tmp, folder / "result.json")
    # Skip interpreter teardown: a candidate's atexit hooks or corrupted heap must not turn a
    # written verdict into a crash.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
