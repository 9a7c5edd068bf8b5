"""What it costs to move a judged call's tensors between the judge and a runner, on the machine it
runs on (issue [E]): the host path the verifier uses today (torch.save / torch.load through
/dev/shm, with the device copies) against CUDA IPC (the storage's handle sent over a pipe, the
other process copying device to device). Milliseconds per transfer, per size.
    python scripts/transport_bench.py OUT.json
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import time
from pathlib import Path

import torch

SIZES_MB = (0.004, 4, 64)
ROUNDS = 20


def _ms(fn, rounds: int = ROUNDS) -> float:  # noqa: ANN001
    fn()
    torch.cuda.synchronize()
    mark = time.perf_counter()
    for _ in range(rounds):
        fn()
    torch.cuda.synchronize()
    return round(1e3 * (time.perf_counter() - mark) / rounds, 3)


def _send(f, obj: object) -> None:  # noqa: ANN001
    data = pickle.dumps(obj)
    f.write(struct.pack("<I", len(data)) + data)
    f.flush()


def _recv(f) -> object:  # noqa: ANN001
    (n,) = struct.unpack("<I", f.read(4))
    return pickle.loads(f.read(n))


def _open(share: tuple) -> torch.UntypedStorage:
    return torch.UntypedStorage._new_shared_cuda(*share)


def child() -> None:
    """Exports a fresh tensor per request (as a runner would its output), and imports one the
    parent exports (as a runner would its inputs), copying it into memory of its own."""
    torch.cuda.init()
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    while True:
        req = _recv(inbox)
        if req is None:
            return
        kind, nbytes = req
        if kind == "export":
            t = torch.full((nbytes // 4,), 1.5, device="cuda")
            torch.cuda.synchronize()
            _send(outbox, t.untyped_storage()._share_cuda_())
            del t
            torch.cuda.ipc_collect()
        else:
            share = _recv(inbox)
            s = _open(share)
            own = torch.empty(s.nbytes(), dtype=torch.uint8, device="cuda")
            own.untyped_storage().copy_(s)
            torch.cuda.synchronize()
            del s
            _send(outbox, float(own.view(torch.float32).sum()))


def main(out: Path) -> None:
    torch.cuda.init()
    figures: dict[str, dict[str, float]] = {}
    shm = Path("/dev/shm/kernelgen-transport.pt")
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for mb in SIZES_MB:
            nbytes = max(4, int(mb * 2**20) // 4 * 4)
            row: dict[str, float] = {}
            host = torch.randn(nbytes // 4)
            dev = host.cuda()
            row["host_clone_ms"] = _ms(lambda host=host: host.clone())
            row["d2h_pageable_ms"] = _ms(lambda dev=dev: dev.cpu())
            pinned = torch.empty(nbytes // 4, pin_memory=True)
            row["d2h_pinned_ms"] = _ms(lambda dev=dev, pinned=pinned: pinned.copy_(dev))
            row["save_cuda_ms"] = _ms(lambda dev=dev: torch.save([dev], shm))
            row["load_to_cuda_ms"] = _ms(
                lambda: torch.load(shm, map_location="cuda", weights_only=True)
            )

            def ipc_out(nbytes: int = nbytes) -> None:
                _send(proc.stdin, ("export", nbytes))
                s = _open(_recv(proc.stdout))
                own = torch.empty(s.nbytes(), dtype=torch.uint8, device="cuda")
                own.untyped_storage().copy_(s)
                torch.cuda.synchronize()
                assert float(own.view(torch.float32)[0]) == 1.5

            def ipc_in(dev: torch.Tensor = dev) -> None:
                _send(proc.stdin, ("import", dev.nbytes))
                _send(proc.stdin, dev.untyped_storage()._share_cuda_())
                _recv(proc.stdout)

            row["ipc_out_ms"] = _ms(ipc_out)
            row["ipc_in_ms"] = _ms(ipc_in)
            figures[f"{mb} MB"] = row
            print(mb, "MB", json.dumps(row), flush=True)
            out.write_text(json.dumps(figures, indent=2))
    finally:
        _send(proc.stdin, None)
        proc.wait(timeout=30)
        shm.unlink(missing_ok=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        os.environ.setdefault("PYTHONUNBUFFERED", "1")
        main(Path(sys.argv[1]))
