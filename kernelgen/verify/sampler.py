"""Where a process's time goes, at a cost low enough not to change the answer: a thread that
looks at the main thread's stack every few milliseconds and counts, per sample, the innermost
frame and the innermost frame in kernelgen. A development instrument (scripts/profile_verify.py;
the runner starts one when KERNELGEN_RUNNER_PROFILE names a folder); cProfile's per-call cost
inflated the judge's share of a verify fivefold."""

from __future__ import annotations

import collections
import sys
import threading
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2]) + "/"  # the checkout, cut from frame names


class Sampler:
    def __init__(self, interval_s: float = 0.002):
        self.interval_s = interval_s
        self.leaf: collections.Counter[str] = collections.Counter()
        self.ours: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self._main = threading.main_thread().ident
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="kernelgen-sampler")

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            frame = sys._current_frames().get(self._main)  # noqa: SLF001 - the point of it
            if frame is None:
                continue
            self.samples += 1
            self.leaf[_where(frame)] += 1
            f = frame
            while f is not None and "kernelgen" not in f.f_code.co_filename:
                f = f.f_back
            self.ours[_where(f) if f is not None else "(outside kernelgen)"] += 1

    def report(self, top: int = 30) -> str:
        lines = [f"{self.samples} samples every {self.interval_s * 1e3:.0f} ms"]
        for title, counts in (("innermost frame", self.leaf), ("innermost kernelgen", self.ours)):
            lines.append(f"\n-- {title} --")
            for where, n in counts.most_common(top):
                lines.append(
                    f"{n * self.interval_s:8.2f} s  {100 * n / max(1, self.samples):5.1f}%  {where}"
                )
        return "\n".join(lines) + "\n"

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.report())
        tmp.replace(path)


def _where(frame) -> str:  # noqa: ANN001 - a frame
    code = frame.f_code
    name = code.co_filename.rsplit("site-packages/", 1)[-1].removeprefix(_ROOT)
    return f"{name}:{frame.f_lineno} {code.co_name}"
