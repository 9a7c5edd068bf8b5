"""report.html and index.html as a reader sees them: loaded in headless Chromium, offline.

Chromium is driven through the DevTools protocol over a pipe (--remote-debugging-pipe: no port,
no extra package), which reports every console message, uncaught exception, failed load and
network request of the page with its level; the screenshot is the full page at 1400 px wide.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_library_status import record, write

from kernelgen.report import render_run, render_status

CHROMIUM = next(
    (p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and Path(p).is_file()), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)"
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--window-size=1400,2000",
    "--remote-debugging-pipe",
]


class Browser:
    """The smallest DevTools client: JSON messages, NUL-terminated, on fds 3 (in) and 4 (out)."""

    def __init__(self, profile: Path):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4; park the pipe ends high
        # first, so placing them on 3 and 4 cannot clobber one another.
        high = [os.dup2(fd, 100 + i) for i, fd in enumerate((to_chrome_r, from_chrome_w))]

        def place() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.stderr = profile.parent / "chromium.log"
        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr.open("w"),
            preexec_fn=place,
            pass_fds=(3, 4),
        )
        for fd in (to_chrome_r, from_chrome_w, *high):
            os.close(fd)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)

    def _read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                return None
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium exited; see {self.stderr}")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: str | None = None, timeout: float = 30, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self._read(deadline - time.monotonic())
            if reply is None:
                break
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(f"{method}: no reply in {timeout}s")

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for ev in self.events[seen:]:
                if ev.get("method") == method:
                    return ev
            seen = len(self.events)
            ev = self._read(deadline - time.monotonic())
            if ev is not None:
                self.events.append(ev)
        raise TimeoutError(f"no {method} in {timeout}s")


def open_page(page: Path, shot: Path) -> dict:
    """Load page, return what the page logged and what its DOM holds; save a full-page PNG."""
    browser = Browser(shot.parent / f"profile-{shot.stem}")
    try:
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        s = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable", s)
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            s,
            width=1400,
            height=2000,
            deviceScaleFactor=1,
            mobile=False,
        )
        browser.call("Page.navigate", s, url=page.as_uri())
        browser.wait_for("Page.loadEventFired")
        probe = browser.call(
            "Runtime.evaluate",
            s,
            returnByValue=True,
            expression="""({
                title: document.title,
                sbsRows: document.querySelectorAll('#diff-sbs tbody tr').length,
                added: document.querySelectorAll('#diff-sbs td.add').length,
                removed: document.querySelectorAll('#diff-sbs td.del').length,
                imgs: [...document.querySelectorAll('img')].map(i => ({
                    alt: i.alt, ok: i.complete && i.naturalWidth > 0, w: i.naturalWidth})),
                svgs: document.querySelectorAll('svg').length,
                links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
                text: document.body.innerText,
                height: document.documentElement.scrollHeight,
                width: document.documentElement.scrollWidth,
                statusRows: [...document.querySelectorAll('table.status tbody tr')].map(r => ({
                    op: r.cells[0].innerText, height: r.getBoundingClientRect().height})),
                folded: [...document.querySelectorAll('details')].map(d => ({
                    open: d.open, summary: d.querySelector('summary').innerText,
                    text: d.textContent})),
            })""",
        )["result"]["value"]
        height = min(int(probe["height"]), 16000)
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            s,
            width=1400,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        png = browser.call("Page.captureScreenshot", s, format="png", captureBeyondViewport=True)[
            "data"
        ]
        shot.write_bytes(base64.b64decode(png))
        probe["errors"] = _errors(browser.events)
        probe["requests"] = [
            ev["params"]["request"]["url"]
            for ev in browser.events
            if ev.get("method") == "Network.requestWillBeSent"
        ]
        return probe
    finally:
        browser.close()


def _errors(events: list[dict]) -> list[str]:
    out = []
    for ev in events:
        m, p = ev.get("method"), ev.get("params", {})
        if m == "Runtime.exceptionThrown":
            out.append(p["exceptionDetails"].get("text", "exception"))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            out.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            out.append(p["entry"]["text"])
        elif m == "Network.loadingFailed":
            out.append(f"failed to load: {p.get('errorText')}")
    return out


def _keep(shot: Path) -> None:
    folder = os.environ.get("KERNELGEN_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)


def _offline(requests: list[str]) -> None:
    remote = [u for u in requests if not u.startswith(("file:", "data:", "about:"))]
    assert not remote, f"the page reached for the network: {remote}"


def test_run_report_in_chromium(project, tmp_path):
    report = render_run("softmax", project.cuda_run)
    page = next(p for p in report.written if p.name == "report.html")
    shot = tmp_path / "report-softmax.png"
    got = open_page(page, shot)
    _keep(shot)

    assert got["errors"] == []
    _offline(got["requests"])
    assert "softmax" in got["title"]
    # The side-by-side diff is there, with lines on both sides.
    assert got["sbsRows"] > 20 and got["added"] > 10 and got["removed"] > 5
    # The three plots are embedded and decode as images.
    assert [i["alt"] for i in got["imgs"]] == [
        "Speedup per shape",
        "Best time per round",
        "% of the limit per shape",
    ]
    assert all(i["ok"] and i["w"] > 300 for i in got["imgs"]), got["imgs"]
    text = got["text"]
    for words in (
        "Per shape",
        "History of candidates",
        "r2-c1",
        "★ best",
        "incorrect",
        "OutOfResources",
        "1.69×",
        "Unified diff",
    ):
        assert words in text, words
    assert shot.stat().st_size > 50_000


def test_cpu_report_and_status_page_in_chromium(project, tmp_path):
    report = render_run("silu_and_mul", project.cpu_run)
    page = next(p for p in report.written if p.name == "report.html")
    got = open_page(page, tmp_path / "report-cpu.png")
    _keep(tmp_path / "report-cpu.png")
    assert got["errors"] == []
    assert got["imgs"] == []
    assert "No plots: this run has no timings." in got["text"]
    assert "Ran on CPU through the Triton interpreter" in got["text"]

    status = render_status()
    shot = tmp_path / "status.png"
    got = open_page(status.index, shot)
    _keep(shot)
    assert got["errors"] == []
    _offline(got["requests"])
    assert f"softmax/{project.cuda_run}/report.html" in got["links"]
    for link in got["links"]:
        assert (status.index.parent / link).is_file(), link
    assert "silu_and_mul" in got["text"] and "never" not in got["text"]


def test_status_page_fits_1400_px(project, wide_dispatch, tmp_path):
    """At 1400 px the status page runs off to no side, and a row stays a few lines tall where the
    library dispatches over a dozen shapes and the library bench adds its notes: the shape lists
    fold under their counts, the notes wrap."""
    counts = wide_dispatch
    write(project, "bench-20261201T171420Z.json", record().model_dump_json())
    status = render_status()
    shot = tmp_path / "status-1400.png"
    got = open_page(status.index, shot)
    _keep(shot)

    assert got["errors"] == []
    _offline(got["requests"])
    assert got["width"] <= 1400, f"the page is {got['width']} px wide"
    # Eight lines of the body's text (14 px at line-height 1.5); a dispatch list laid out one
    # shape a line ran a row past 500 px.
    heights = {r["op"]: r["height"] for r in got["statusRows"]}
    assert set(heights) >= {"softmax", "rms_norm", "silu_and_mul"}
    assert max(heights.values()) <= 8 * 21, heights
    # The counts stay in view; every shape is still on the page, folded under them.
    brief = (
        f"NVIDIA H200: kernel at {counts['direct']} of {counts['shapes']}, routed at "
        f"{counts['routed']}; by device time at {counts['graphs']}"
    )
    assert brief in got["text"]
    [folded] = got["folded"]
    assert not folded["open"] and folded["summary"] == brief
    assert "by device time (CUDA graphs) at 11 (4096x4096," in folded["text"]
    assert "1x32000, 4x32000)" in folded["text"] and "8x32000" not in folded["text"]
    assert "1x32000, 4x32000" not in got["text"]
    # The library bench's notes are there, wrapped rather than cut.
    assert "torch call under use(): slower past noise at device_us:1x32000" in got["text"]
