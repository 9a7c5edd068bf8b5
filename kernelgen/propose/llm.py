"""The `llm` proposer: an OpenAI-compatible chat endpoint writes the candidates.

K candidates are K parallel requests with the same prompt (local servers rarely support n > 1, and
parallel requests also work where they do). Retries are ours, not openai's (the client runs with
max_retries=0), so every wait is bounded, Retry-After is honoured, and the last failure becomes one
LLMError line that names the endpoint and what to do. The prompts are templates in prompts/,
rendered with string.Template because the code they quote is full of braces.
"""

from __future__ import annotations

import ast
import functools
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from string import Template
from textwrap import dedent
from typing import Any

import openai

from kernelgen import syntax
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.propose.base import Context, HistoryItem, Proposal
from kernelgen.records import CompileFacts, Message, ShapeTiming, Transcript, Usage


class LLMError(KernelgenError):
    """The endpoint failed for good: retries exhausted, or a request it will never accept."""


@functools.cache
def _template(name: str) -> Template:
    return Template((resources.files(__package__) / "prompts" / name).read_text(encoding="utf-8"))


def render_prompt(ctx: Context) -> list[Message]:
    """The system message (role, contract, what to return) and the user message (the context)."""
    best = (
        "The seed above is the best so far."
        if ctx.best_id is None
        else _fenced(ctx.best_source, "python")
    )
    if ctx.device == "cpu":
        device_note = (
            "the CPU, through the Triton interpreter: correctness only, no timings worth the "
            "name. Avoid what the interpreter lacks (`inline_asm_elementwise`, some libdevice)."
        )
    else:
        device_note = "the GPU."
    user = _template("propose.md").substitute(
        op=ctx.op,
        round=ctx.round,
        device_note=device_note,
        hardware=ctx.hardware.strip(),
        spec=ctx.spec.strip(),
        reference=_fenced(ctx.reference_source, "python"),
        seed=_fenced(ctx.seed_source, "python"),
        best_label="the seed" if ctx.best_id is None else ctx.best_id,
        best=best,
        timings=_timings_table(ctx.timings),
        compile=_compile_table(ctx.compile),
        profile=ctx.profile or "Not profiled.",
        history=_history(ctx.history),
        last_failure=_fenced(_clip(ctx.last_failure), "text") if ctx.last_failure else "None.",
        signature=_signature(ctx),
    )
    system = _template("system.md").substitute(
        signature=_signature(ctx), software=ctx.software or _software(), imports=_imports()
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def render_repair(ctx: Context, failed: Proposal, failure: str) -> list[Message]:
    """The conversation that produced `failed`, its reply, and a turn quoting the failure."""
    transcript = failed.transcript
    if transcript is not None and transcript.messages:
        messages = list(transcript.messages)
    else:
        # A candidate from elsewhere (a file, a replay without prompts): ask as if we wrote it.
        messages = render_prompt(ctx)
    if transcript is not None and transcript.reply:
        answer = _strip_thinking(transcript.reply).strip()
    elif failed.source is not None:
        answer = _fenced(failed.source, "python")
    else:
        answer = "(no code)"
    turn = _template("repair.md").substitute(
        failure=_fenced(_clip(failure), "text"), signature=_signature(ctx)
    )
    return [
        *messages,
        Message(role="assistant", content=answer),
        Message(role="user", content=turn),
    ]


def _imports() -> str:
    """The modules a candidate may import, read from the verifier's allowlist: the rule is
    written once, there, and the prompt cannot drift from what the verifier enforces."""
    from kernelgen.verify.allowlist import MODULES

    # torch and triton first, as a kernel author reads them; then the rest by name.
    names = sorted(MODULES, key=lambda m: (m.split(".")[0] not in ("torch", "triton"), m))
    return ", ".join(
        "`triton.language` (as `tl`)" if m == "triton.language" else f"`{m}`" for m in names
    )


def _software() -> str:
    """This process's torch and Triton, for a context that does not name the run's (one stored
    by an older kernelgen)."""
    import torch
    import triton

    return f"torch {torch.__version__}, Triton {triton.__version__}"


def _fenced(text: str, lang: str = "") -> str:
    # A fence longer than any backtick run inside, so quoted text can never close it early.
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _clip(text: str, limit: int = 12_000) -> str:
    # Tracebacks can run to megabytes; the head names the error and the tail where it happened.
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"


def _signature(ctx: Context) -> str:
    tree = syntax.parse(ctx.reference_source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == ctx.op:
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            return f"def {node.name}({ast.unparse(node.args)}){returns}"
    return f"def {ctx.op}(...)"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _timings_table(timings: list[ShapeTiming]) -> str:
    if not timings:
        return "None yet: no GPU measurements in this run."
    rows = [
        "| shape | dtype | us | host us | floor us | GB/s | TFLOP/s | % of limit | bound "
        "| vs eager | vs compile | vs seed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in timings:
        host = "-" if t.candidate.host_us is None else f"{t.candidate.host_us:.1f}"
        rows.append(
            f"| {t.shape} | {t.dtype} | {t.candidate.median_us:.1f} | {host} | {t.floor_us:.1f} "
            f"| {t.gbps:.0f} | {t.tflops:.1f} | {t.limit_pct:.0f} % | {t.bound} "
            f"| {_x(t.speedup_eager)} | {_x(t.speedup_compile)} | {_x(t.speedup_seed)} |"
        )
    return "\n".join(rows)


def _compile_table(facts: list[CompileFacts]) -> str:
    if not facts:
        return "None recorded."

    def cell(value: int | None) -> str:
        return "-" if value is None else str(value)

    rows = [
        "| kernel | registers | spills | shared bytes | warps | stages |",
        "|---|---|---|---|---|---|",
    ]
    for f in facts:
        rows.append(
            f"| {f.kernel} | {cell(f.registers)} | {cell(f.spills)} | {cell(f.shared_bytes)} "
            f"| {cell(f.num_warps)} | {cell(f.num_stages)} |"
        )
    return "\n".join(rows)


def _history(history: list[HistoryItem], last: int = 30) -> str:
    if not history:
        return "None yet."
    lines = [] if len(history) <= last else [f"({len(history) - last} earlier attempts left out)"]
    for h in history[-last:]:
        line = f"- {h.id} (from {h.parent or 'scratch'}): {h.status}"
        if h.category:
            line += f" [{h.category}]"
        if h.speedup is not None:
            line += f", {h.speedup:.2f}x vs the best of its time"
        if h.reason:
            reason = " ".join(h.reason.split())
            line += f": {reason[:300]}"
        lines.append(line)
    return "\n".join(lines)


_PYTHON = {"python", "py", "python3", "py3"}
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^`\s]*)")
# Reasoning models served without a reasoning parser think aloud in <think>: only the answer counts.
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)


@dataclass
class _Block:
    lang: str
    body: str
    closed: bool


def _strip_thinking(reply: str) -> str:
    return _THINK.sub("", reply)


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    fence, lang, lines = "", "", []
    for line in text.splitlines():
        m = _FENCE.match(line)
        if not fence:
            if m:
                fence, lang, lines = m[1], m[2].lower(), []
        elif m and line.strip() == m[1] and m[1][0] == fence[0] and len(m[1]) >= len(fence):
            blocks.append(_Block(lang, dedent("\n".join(lines)).strip("\n") + "\n", True))
            fence = ""
        else:
            lines.append(line)
    if fence:
        blocks.append(_Block(lang, dedent("\n".join(lines)).strip("\n") + "\n", False))
    return blocks


def _defines(source: str, entry: str | None) -> bool:
    """Whether the source parses and defines `entry` (any function when entry is None)."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, ast.FunctionDef) and (entry is None or node.name == entry)
        for node in tree.body
    )


def extract_code(reply: str, entry: str | None = None) -> str | None:
    """The module in a reply: the last ```python block that defines `entry`, else the largest
    ```python block (returned even when it does not parse: the verifier reports the syntax
    error), else a bare ``` block that parses and defines a function, else an unclosed
    ```python block or the whole reply when either parses as such a module; None otherwise."""
    text = _strip_thinking(reply)
    blocks = _blocks(text)
    closed = [b for b in blocks if b.closed]
    python = [b.body for b in closed if b.lang in _PYTHON]
    found = [s for s in python if _defines(s, entry)]
    if found:
        return found[-1]
    if python:
        return max(python, key=len)
    bare = [b.body for b in closed if not b.lang and _defines(b.body, None)]
    if bare:
        named = [s for s in bare if entry and _defines(s, entry)]
        return (named or bare)[-1]
    # A model that forgot the closing fence, or skipped fences: take it only when it parses.
    unclosed = [b.body for b in blocks if not b.closed and b.lang in _PYTHON]
    if unclosed and _defines(unclosed[-1], entry):
        return unclosed[-1]
    if not blocks and _defines(text, entry):
        return text.strip() + "\n"
    return None


def _retry_after(response: Any) -> float | None:
    headers = getattr(response, "headers", None) or {}
    for header, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                return None  # an HTTP date: rare from LLM servers, so plain backoff is enough
    return None


def _one_line(text: object, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LLMProposer:
    """Candidates from any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama...)."""

    name = "llm"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 8192,
        temperature: float | None = 0.7,
        timeout_s: float = 600.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
        concurrency: int = 4,
    ) -> None:
        if concurrency < 1 or max_retries < 0 or max_tokens < 1:
            raise UsageError(
                f"llm proposer: concurrency ({concurrency}) and max_tokens ({max_tokens}) must be "
                f">= 1 and max_retries ({max_retries}) >= 0"
            )
        self.model: str | None = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.price_in = price_in_per_mtok
        self.price_out = price_out_per_mtok
        self.concurrency = concurrency
        priced = price_in_per_mtok is not None or price_out_per_mtok is not None
        self.usage = Usage(cost_usd=0.0 if priced else None)
        self._lock = threading.Lock()
        # Local servers accept any key; openai refuses to start without one.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout_s, max_retries=0
        )
        self.endpoint = str(self._client.base_url).rstrip("/")
        # OpenAI's reasoning models reject max_tokens and non-default temperatures; _adapt learns.
        self._tokens_param = "max_tokens"

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        messages = render_prompt(ctx)
        return self._ask_all([messages] * k, ctx.op)

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return self._ask_all([render_repair(ctx, failed, failure)], ctx.op)[0]

    def _ask_all(self, conversations: list[list[Message]], entry: str) -> list[Proposal]:
        if not conversations:
            return []
        pool = ThreadPoolExecutor(max_workers=min(len(conversations), self.concurrency))
        try:
            futures = [pool.submit(self._ask, messages, entry) for messages in conversations]
            return [f.result() for f in futures]
        finally:
            # On an LLMError, requests not yet sent are dropped; those in flight finish and count.
            pool.shutdown(wait=True, cancel_futures=True)

    def _ask(self, messages: list[Message], entry: str) -> Proposal:
        response = self._complete(messages)
        usage = self._usage(response)
        with self._lock:
            self.usage = self.usage + usage
        choice = response.choices[0] if response.choices else None
        reply = (choice.message.content if choice else None) or ""
        finish = choice.finish_reason if choice else None
        source = extract_code(reply, entry) if reply else None
        error = None
        if source is None:
            if finish == "length":
                error = (
                    f"no_code: the reply was cut off at max_tokens={self.max_tokens} before its "
                    "code block was complete; raise max_tokens"
                )
            elif not reply:
                error = f"no_code: empty reply (finish_reason={finish})"
            else:
                error = "no_code: the reply has no ```python block"
        transcript = Transcript(
            messages=messages,
            reply=reply,
            model=response.model or self.model,
            usage=usage,
            error=None if reply else f"empty reply (finish_reason={finish})",
        )
        return Proposal(source=source, transcript=transcript, error=error)

    def _usage(self, response: Any) -> Usage:
        tokens = response.usage
        prompt = (tokens.prompt_tokens if tokens else None) or 0
        completion = (tokens.completion_tokens if tokens else None) or 0
        cost = None
        if self.price_in is not None or self.price_out is not None:
            cost = (prompt * (self.price_in or 0.0) + completion * (self.price_out or 0.0)) / 1e6
        return Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost)

    def _complete(self, messages: list[Message]) -> Any:
        attempts = self.max_retries + 1
        attempt = 0
        while True:
            params: dict[str, Any] = {self._tokens_param: self.max_tokens}
            if self.temperature is not None:
                params["temperature"] = self.temperature
            try:
                return self._client.chat.completions.create(
                    model=self.model,
                    messages=[m.model_dump() for m in messages],
                    **params,
                )
            except openai.APITimeoutError:
                problem, wait = f"timed out after {self.timeout_s:g} s", None
            except openai.APIConnectionError as e:
                problem, wait = f"connection failed ({_one_line(e.__cause__ or e)})", None
            except openai.APIStatusError as e:
                status = e.status_code
                if status != 408 and status != 429 and status < 500:
                    if self._adapt(e, params):
                        continue  # the same request in the form this model takes: not a retry
                    raise LLMError(self._fatal(e)) from e
                problem = f"HTTP {status} ({_one_line(e.message, 120)})"
                wait = _retry_after(e.response)
            attempt += 1
            if attempt >= attempts:
                raise LLMError(
                    f"LLM endpoint {self.endpoint} (model {self.model}): {problem} on all "
                    f"{attempts} attempts; check that the server is up and not overloaded, "
                    "or allow more retries or a longer timeout"
                )
            if wait is None:
                # Jitter keeps K parallel requests from retrying in lockstep.
                wait = self.backoff_s * 2 ** (attempt - 1) * random.uniform(0.5, 1.0)
            time.sleep(min(wait, self.max_backoff_s))

    def _adapt(self, e: openai.APIStatusError, sent: dict[str, Any]) -> bool:
        """Switch to what the model accepts when a 400 names max_tokens or temperature.

        Judged on what this request sent, so a parallel request that was refused before another
        one adapted is sent again rather than failed."""
        if e.status_code != 400:
            return False
        message = str(e.message)
        with self._lock:
            if "max_completion_tokens" in message and "max_tokens" in sent:
                self._tokens_param = "max_completion_tokens"
                return True
            if "temperature" in message and "temperature" in sent:
                self.temperature = None
                return True
        return False

    def _fatal(self, e: openai.APIStatusError) -> str:
        where = f"LLM endpoint {self.endpoint}"
        said = _one_line(e.message)
        if e.status_code == 401:
            return f"{where} rejected the API key (HTTP 401): set OPENAI_API_KEY or pass --api-key"
        if e.status_code == 403:
            return f"{where} denied access to model {self.model} (HTTP 403): {said}"
        if e.status_code == 404:
            return (
                f"{where} has no model {self.model!r} or no chat completions route (HTTP 404): "
                "check the model name and the base URL (usually ending in /v1)"
            )
        return f"{where} rejected the request (HTTP {e.status_code}): {said}"
