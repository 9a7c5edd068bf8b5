"""One error family. The CLI prints any KernelgenError as one red line and exits with its code.

Exit codes, the same for every command:
    0  done (a candidate accepted, a report written, a run finished)
    1  the answer is no, or the work failed on its way: a candidate rejected, a run not
       promoted, a worker lost, an endpoint that does not answer
    2  what was given is wrong: a flag, an operator name, a run id, a spec, a stored record
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class KernelgenError(Exception):
    """A failure the user can act on; its message is one line that names what and where."""

    exit_code = 1


class UsageError(KernelgenError):
    """Bad invocation: unknown operator, missing file, wrong flag combination."""

    exit_code = 2


class SpecError(KernelgenError):
    """A reference or seed does not follow the operator contract (names the file and field)."""

    exit_code = 2


class NoDeviceError(UsageError):
    """The command needs CUDA and there is none."""


class StoreError(KernelgenError):
    """An evaluation record is missing or unreadable: a run id that names no run, a record
    that does not parse. Either way the input is what needs fixing."""

    exit_code = 2


# What pydantic puts before the message of an exception raised in a validator: library text the
# reader has no use for (`Value error, only a float scalar can be drawn`).
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")


def first_error(e: ValidationError, default_where: str = "") -> str:
    """The first problem of a pydantic ValidationError as one line: `field.path: message`,
    without pydantic's own prefixes."""
    err = e.errors()[0]
    msg = str(err["msg"])
    for prefix in _PYDANTIC_PREFIXES:
        msg = msg.removeprefix(prefix)
    where = ".".join(str(p) for p in err["loc"]) or default_where
    return f"{where}: {msg}" if where else msg
