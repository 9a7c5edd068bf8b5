"""kernelgen.syntax: parsing from several threads at once (python/cpython#106905)."""

from __future__ import annotations

import ast
import gc
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kernelgen import syntax

SOURCE = (Path(__file__).parents[1] / "seeds" / "softmax.py").read_text() * 5


class _Cycle:
    """Cyclic garbage with a finalizer: a collection inside the AST constructor runs Python
    code, and so lets another thread in; that is how the shared depth counter gets corrupted."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        for _ in range(50):
            pass


@pytest.fixture
def busy_interpreter() -> Iterator[None]:
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(50, 2, 2)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)


def _errors(parse: Callable[[str], ast.Module], seconds: float = 1.5) -> list[SystemError]:
    errors: list[SystemError] = []
    stop = time.monotonic() + seconds

    def work() -> None:
        while time.monotonic() < stop and not errors:
            for _ in range(20):
                _Cycle()
            try:
                parse(SOURCE)
            except SystemError as e:
                errors.append(e)

    with ThreadPoolExecutor(4) as ex:
        for f in [ex.submit(work) for _ in range(4)]:
            f.result()
    return errors


@pytest.mark.usefixtures("busy_interpreter")
def test_parse_from_threads_never_corrupts_the_constructor() -> None:
    assert _errors(syntax.parse) == []


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the race is CPython 3.11's")
@pytest.mark.usefixtures("busy_interpreter")
def test_the_stress_does_break_a_bare_parse() -> None:
    """The test above means something: the same load breaks ast.parse without the lock (within
    0.3 s on a 2-core machine; the first error ends the wait)."""
    errors = _errors(ast.parse, seconds=10.0)
    assert errors and "recursion depth mismatch" in str(errors[0])


def test_parse_errors_propagate() -> None:
    with pytest.raises(SyntaxError):
        syntax.parse("def f(:\n")
