"""Parsing Python source safely from any thread.

CPython 3.11 keeps the AST constructor's recursion depth in one per-interpreter counter, so two
threads building trees at once can corrupt it: `ast.parse` then fails at random with "SystemError:
AST constructor recursion depth mismatch" (python/cpython#106905). kernelgen parses on threads (an
LLM proposer's parallel requests, a round's chains side by side), so every parse goes through the
one lock here. A parse takes well under a millisecond; holding a lock for it costs nothing.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str) -> ast.Module:
    """`ast.parse(source)`, one thread at a time; SyntaxError and ValueError propagate."""
    with _LOCK:
        return ast.parse(source)
