"""A real OpenAI-compatible chat server on loopback, scripted step by step, for tests.

Each POST /v1/chat/completions takes the next step of the script (a JSON object):
  {"reply": "text"}             200 with a chat.completion; optional "finish_reason" ("stop"),
                                "usage": {"prompt_tokens": n, "completion_tokens": m} or null
                                (default: about 4 characters a token)
  {"status": 500}               that status with an OpenAI-style error body; optional "message",
                                "retry_after" (sent as the Retry-After header)
  {"delay": 2.0, ...}           sleep first (to trip client timeouts), then play the rest of the
                                step, or the default when nothing else is in it
  {"drop": true}                close the connection without a response
When the script runs out, `default` answers every request ({"reply": "No more replies..."}).
Every request body is kept in `requests`, in arrival order.

As a process, so that a test can kill -9 a client talking to it:
  python tests/fake_llm.py --script steps.json --port-file port.txt [--log requests.jsonl]
where steps.json is a list of steps or {"steps": [...], "default": {...}}; the port file appears
once the server listens, and --log gets one JSON line per request. `spawn` does all of that.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

Step = dict[str, Any]
DEFAULT: Step = {"reply": "No more replies are scripted, so here is some prose and no code."}


class FakeLLM:
    def __init__(
        self,
        steps: Iterable[Step] = (),
        default: Step | None = None,
        port: int = 0,
        log: Path | None = None,
    ) -> None:
        self.default = default or DEFAULT
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._steps: deque[Step] = deque(steps)
        self._log = log
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._server.daemon_threads = True  # a handler asleep in a delay must not block stop()
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    def start(self) -> FakeLLM:
        # A short poll interval: stop() waits for one, and tests stop a server each.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _take(self, body: dict[str, Any]) -> Step:
        with self._lock:
            self.requests.append(body)
            if self._log is not None:
                with self._log.open("a") as f:
                    f.write(json.dumps(body) + "\n")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._steps.popleft() if self._steps else self.default

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        fake: FakeLLM = self.server.fake  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        step = fake._take(body)
        try:
            self._play(step, body, fake.default)
        except ConnectionError:
            pass  # the client gave up (a timeout): nobody is left to answer
        finally:
            fake._done()

    def _play(self, step: Step, body: dict[str, Any], default: Step) -> None:
        if "delay" in step:
            time.sleep(step["delay"])
            step = {k: v for k, v in step.items() if k != "delay"} or default
        if step.get("drop"):
            self.close_connection = True
            return
        if "status" in step:
            headers = {}
            if step.get("retry_after") is not None:
                headers["Retry-After"] = str(step["retry_after"])
            message = step.get("message", f"scripted status {step['status']}")
            error = {"message": message, "type": "server_error", "code": None, "param": None}
            self._send(step["status"], {"error": error}, headers)
            return
        reply = step["reply"]
        usage = step.get("usage", _estimate(body, reply))
        if usage is not None:
            usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
        completion = {
            "id": f"chatcmpl-fake-{len(reply)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": step.get("finish_reason", "stop"),
                }
            ],
            "usage": usage,
        }
        self._send(200, completion)

    def _send(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _estimate(body: dict[str, Any], reply: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    return {"prompt_tokens": prompt // 4 + 1, "completion_tokens": len(reply) // 4 + 1}


@pytest.fixture(name="fake_llm")
def fake_llm_fixture() -> Iterator[FakeLLM]:
    """A started server with an empty script: push() steps, point the client at .url."""
    with FakeLLM() as server:
        yield server


def spawn(
    script: Path, port_file: Path, log: Path | None = None, wait_s: float = 10.0
) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server as its own process; returns it and its base URL once it listens."""
    cmd = [sys.executable, __file__, "--script", str(script), "--port-file", str(port_file)]
    if log is not None:
        cmd += ["--log", str(log)]
    proc = subprocess.Popen(cmd)
    deadline = time.monotonic() + wait_s
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"fake LLM server did not start (exit code {proc.poll()})")
        time.sleep(0.02)
    return proc, f"http://127.0.0.1:{int(port_file.read_text())}/v1"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible chat server.")
    parser.add_argument("--script", type=Path, required=True, help="JSON list of steps")
    parser.add_argument("--port-file", type=Path, required=True, help="written once listening")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--log", type=Path, help="append each request body as a JSON line")
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text())
    if isinstance(script, list):
        script = {"steps": script}
    fake = FakeLLM(script.get("steps", []), script.get("default"), args.port, args.log)
    # Written whole, then renamed: a poller never reads half a port number.
    tmp = args.port_file.with_name(args.port_file.name + ".tmp")
    tmp.write_text(str(fake.port))
    tmp.replace(args.port_file)
    fake._server.serve_forever()


if __name__ == "__main__":
    main()
