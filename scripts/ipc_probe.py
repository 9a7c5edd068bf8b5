"""Can two sandboxed processes share CUDA memory here (torch's CUDA IPC), and what does opening
a handle cost? A feasibility probe for handing outputs from the runner to the judge without a
file. Run on the GPU machine: python scripts/ipc_probe.py"""

from __future__ import annotations

import pickle
import subprocess
import sys
import time

PRODUCER = r"""
import pickle, sys, time, torch
from torch.multiprocessing.reductions import reduce_tensor
ts = [torch.full((n,), float(i), device="cuda") for i, n in enumerate([1, 1000, 10_000_000])]
torch.cuda.synchronize()
start = time.perf_counter()
handles = [reduce_tensor(t) for t in ts]
sys.stdout.buffer.write(pickle.dumps((handles, time.perf_counter() - start)))
sys.stdout.flush()
sys.stdin.read()  # keep the memory alive until the consumer is done
"""


def main() -> None:
    import torch

    torch.cuda.init()
    torch.empty(1, device="cuda")
    p = subprocess.Popen(
        [sys.executable, "-c", PRODUCER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert p.stdout is not None and p.stdin is not None
    data = p.stdout.read1(1 << 20)
    while True:
        try:
            handles, reduce_s = pickle.loads(data)
            break
        except (EOFError, pickle.UnpicklingError):
            data += p.stdout.read1(1 << 20)
    start = time.perf_counter()
    tensors = [fn(*a) for fn, a in handles]
    sums = [float(t.sum()) for t in tensors]
    open_s = time.perf_counter() - start
    print(f"ipc ok: sums {sums}, reduce {reduce_s * 1e3:.2f} ms, open+read {open_s * 1e3:.2f} ms")
    p.stdin.close()
    p.wait()


if __name__ == "__main__":
    main()
