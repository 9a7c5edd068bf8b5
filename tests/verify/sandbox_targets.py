"""Targets for the sandbox tests: each misbehaves in its own way inside the child process."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
import time


def ok(request: str) -> str:
    return request.upper()


def hang(request: str) -> str:
    while True:
        time.sleep(0.1)


def segfault(request: str) -> str:
    ctypes.string_at(0)
    return "unreachable"


def exit_quietly(request: str) -> str:
    os._exit(0)


def abort(request: str) -> str:
    os.abort()


def eat_memory(request: str) -> str:
    hog = []
    while True:
        hog.append(bytearray(64 * 2**20))


def gpu_out_of_memory(request: str) -> str:
    # torch's words when the caching allocator cannot get device memory
    raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 139.8 GiB total)")


def raises(request: str) -> str:
    raise RuntimeError("boom")


def leave_children(request: str) -> str:
    """Starts a sleeping grandchild and a thread, records the grandchild's pid, then hangs."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(request, "w") as f:
        f.write(str(child.pid))
    threading.Thread(target=time.sleep, args=(600,), daemon=False).start()
    while True:
        time.sleep(0.1)


def forge_result(request: str) -> str:
    """Writes a result file without the nonce, then dies: must still count as a crash."""
    folder = sys.argv[2]
    with open(os.path.join(folder, "result.json"), "w") as f:
        f.write('{"nonce": "guess", "result": "accepted"}')
    os._exit(0)


def hang_with_pid(request: str) -> str:
    """Writes its pid to the file named by the request, then hangs."""
    with open(request, "w") as f:
        f.write(str(os.getpid()))
    while True:
        time.sleep(0.1)
