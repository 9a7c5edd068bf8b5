"""One error family. The CLI prints any KernelgenError as one red line and exits non-zero."""


class KernelgenError(Exception):
    """A failure the user can act on; its message is one line that names what and where."""

    exit_code = 1


class UsageError(KernelgenError):
    """Bad invocation: unknown operator, missing file, wrong flag combination."""

    exit_code = 2


class SpecError(KernelgenError):
    """A reference or seed does not follow the operator contract (names the file and field)."""


class NoDeviceError(UsageError):
    """The command needs CUDA and there is none."""


class StoreError(KernelgenError):
    """An evaluation record is missing or unreadable."""
