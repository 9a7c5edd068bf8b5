"""The llm proposer end to end: the real openai client against a scripted server on loopback."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from kernelgen.propose.base import Context, HistoryItem, Proposal
from kernelgen.propose.llm import LLMError, LLMProposer, extract_code, render_prompt
from kernelgen.records import CompileFacts, PeerTime, ShapeTiming

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where fake_llm.py lives
from fake_llm import FakeLLM, fake_llm_fixture, spawn  # noqa: E402, F401 (a pytest fixture)

ROOT = Path(__file__).parents[2]
SEED = (ROOT / "seeds" / "softmax.py").read_text()
GOOD = f"I fused the two passes.\n\n```python\n{SEED}```\n"
PROSE = "I would use a two-pass online softmax with a larger block, but I will not write it here."


def make_ctx(**overrides: object) -> Context:
    fields: dict[str, object] = {
        "op": "softmax",
        "round": 1,
        "device": "cuda",
        "spec": "softmax over the last dimension; dtypes float32, float16, bfloat16",
        "reference_source": (ROOT / "references" / "softmax.py").read_text(),
        "seed_source": SEED,
        "best_source": SEED,
        "best_id": None,
        "hardware": "NVIDIA H200: 132 SMs, 228 KB shared memory per SM, about 4.8 TB/s",
    }
    fields.update(overrides)
    return Context.model_validate(fields)


def make_proposer(server: FakeLLM, **overrides: object) -> LLMProposer:
    options: dict = {"timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.01}
    options.update(overrides)
    return LLMProposer("fake-model", base_url=server.url, **options)


def test_good_reply_gives_the_source(fake_llm: FakeLLM) -> None:
    fake_llm.push({"reply": GOOD, "usage": {"prompt_tokens": 1000, "completion_tokens": 200}})
    [proposal] = make_proposer(fake_llm).propose(make_ctx(), 1)
    assert proposal.source == SEED
    assert proposal.error is None
    t = proposal.transcript
    assert t is not None and t.reply == GOOD and t.model == "fake-model" and t.error is None
    assert [m.role for m in t.messages] == ["system", "user"]
    assert (t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.calls) == (1000, 200, 1)
    body = fake_llm.requests[0]
    assert body["model"] == "fake-model" and body["max_tokens"] == 8192
    assert body["messages"] == [m.model_dump() for m in t.messages]


def test_prose_without_code_is_no_code_and_keeps_the_reply(fake_llm: FakeLLM) -> None:
    fake_llm.push({"reply": PROSE})
    [proposal] = make_proposer(fake_llm).propose(make_ctx(), 1)
    assert proposal.source is None
    assert proposal.error is not None and proposal.error.startswith("no_code:")
    assert proposal.transcript is not None and proposal.transcript.reply == PROSE


def test_cut_off_reply_says_so(fake_llm: FakeLLM) -> None:
    fake_llm.push({"reply": "```python\ndef softmax(x):\n    return (", "finish_reason": "length"})
    [proposal] = make_proposer(fake_llm, max_tokens=64).propose(make_ctx(), 1)
    assert proposal.source is None
    assert proposal.error is not None and "max_tokens=64" in proposal.error


@pytest.mark.parametrize(
    "failure",
    [{"status": 500}, {"status": 503}, {"status": 429, "retry_after": 0}, {"drop": True}],
    ids=["500", "503", "429", "dropped"],
)
def test_transient_failure_is_retried(fake_llm: FakeLLM, failure: dict) -> None:
    fake_llm.push(failure, {"reply": GOOD})
    [proposal] = make_proposer(fake_llm).propose(make_ctx(), 1)
    assert proposal.source == SEED
    assert len(fake_llm.requests) == 2


def test_retry_after_is_honoured(fake_llm: FakeLLM) -> None:
    fake_llm.push({"status": 429, "retry_after": 0.3}, {"reply": GOOD})
    start = time.monotonic()
    [proposal] = make_proposer(fake_llm).propose(make_ctx(), 1)
    assert proposal.source == SEED
    assert time.monotonic() - start >= 0.3


def test_timeout_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.push({"delay": 1.0, "reply": "too late"}, {"reply": GOOD})
    [proposal] = make_proposer(fake_llm, timeout_s=0.3).propose(make_ctx(), 1)
    assert proposal.source == SEED
    assert len(fake_llm.requests) == 2


def test_exhausted_retries_raise_one_clear_line(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[{"status": 500}] * 3)
    with pytest.raises(LLMError) as e:
        make_proposer(fake_llm, max_retries=2).propose(make_ctx(), 1)
    message = str(e.value)
    assert "\n" not in message
    assert fake_llm.url in message and "HTTP 500" in message and "3 attempts" in message
    assert len(fake_llm.requests) == 3


def test_exhausted_timeouts_name_the_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[{"delay": 0.6, "reply": "too late"}] * 2)
    with pytest.raises(LLMError, match="timed out after 0.2 s on all 2 attempts"):
        make_proposer(fake_llm, timeout_s=0.2, max_retries=1).propose(make_ctx(), 1)


@pytest.mark.parametrize(
    ("status", "says"), [(401, "API key"), (404, "no model 'fake-model'"), (400, "rejected")]
)
def test_client_errors_are_not_retried(fake_llm: FakeLLM, status: int, says: str) -> None:
    fake_llm.push({"status": status}, {"reply": GOOD})
    with pytest.raises(LLMError, match=says):
        make_proposer(fake_llm).propose(make_ctx(), 1)
    assert len(fake_llm.requests) == 1


def test_adapts_to_models_that_want_max_completion_tokens(fake_llm: FakeLLM) -> None:
    refusal = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
    fake_llm.push({"status": 400, "message": refusal}, {"reply": GOOD})
    [proposal] = make_proposer(fake_llm).propose(make_ctx(), 1)
    assert proposal.source == SEED
    first, second = fake_llm.requests
    assert "max_tokens" in first and second["max_completion_tokens"] == 8192
    assert "max_tokens" not in second


def test_k_requests_go_out_in_parallel(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[{"delay": 0.3, "reply": GOOD}] * 3)
    proposals = make_proposer(fake_llm, concurrency=4).propose(make_ctx(), 3)
    assert [p.source for p in proposals] == [SEED] * 3
    assert len(fake_llm.requests) == 3
    assert fake_llm.max_in_flight == 3


def test_usage_and_cost_accumulate(fake_llm: FakeLLM) -> None:
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 500_000}
    fake_llm.push({"reply": GOOD, "usage": usage}, {"reply": PROSE, "usage": usage})
    proposer = make_proposer(fake_llm, price_in_per_mtok=2.0, price_out_per_mtok=8.0)
    assert proposer.usage.cost_usd == 0.0
    proposals = proposer.propose(make_ctx(), 2)
    assert proposer.usage.calls == 2
    assert proposer.usage.tokens == 3_000_000
    assert proposer.usage.cost_usd == pytest.approx(2 * (2.0 + 4.0))
    assert proposals[1].transcript is not None
    assert proposals[1].transcript.usage.cost_usd == pytest.approx(6.0)


def test_cost_is_none_without_prices_and_tokens_zero_without_usage(fake_llm: FakeLLM) -> None:
    fake_llm.push({"reply": GOOD, "usage": None})
    proposer = make_proposer(fake_llm)
    proposer.propose(make_ctx(), 1)
    assert proposer.usage.calls == 1 and proposer.usage.tokens == 0
    assert proposer.usage.cost_usd is None


def test_prompt_carries_the_context() -> None:
    timing = ShapeTiming(
        shape="4096x4096",
        dtype="float16",
        bytes=1,
        flops=1,
        candidate=PeerTime(median_us=41.5, spread=0.01),
        speedup_eager=1.37,
        gbps=3100.0,
        tflops=0.4,
        limit_pct=64.6,
        floor_us=27.0,
        bound="memory",
    )
    ctx = make_ctx(
        best_id="r1-c0",
        best_source=SEED.replace("one program per row", "BEST-MARKER"),
        timings=[timing],
        compile=[CompileFacts(kernel="_softmax_kernel", registers=40, spills=12)],
        history=[
            HistoryItem(
                id="r1-c1",
                parent="seed",
                status="rejected",
                category="incorrect",
                reason="case odd/float16: max abs err 0.3",
            )
        ],
        last_failure="CompilationError: at 12:4: LAST-FAILURE-MARKER",
    )
    system, user = render_prompt(ctx)
    assert "def softmax(x: torch.Tensor) -> torch.Tensor" in system.content
    assert "```python" in system.content and "TUNE_SPACE" in system.content
    assert ctx.reference_source.strip() in user.content
    assert ctx.seed_source.strip() in user.content
    assert "BEST-MARKER" in user.content
    assert "| 4096x4096 | float16 | 41.5 |" in user.content and "65 %" in user.content
    assert "1.37x" in user.content and "| _softmax_kernel | 40 | 12 |" in user.content
    assert "r1-c1 (from seed): rejected [incorrect]: case odd/float16" in user.content
    assert "LAST-FAILURE-MARKER" in user.content and ctx.hardware in user.content
    assert "$" not in system.content + user.content  # every placeholder was filled


def test_repair_continues_the_conversation_and_quotes_the_failure(fake_llm: FakeLLM) -> None:
    failure = "incorrect: case odd (37x1823, float16, normal): max abs err 3.1e-01 at [5, 1700]"
    fake_llm.push({"reply": GOOD}, {"reply": GOOD})
    proposer = make_proposer(fake_llm)
    ctx = make_ctx()
    [first] = proposer.propose(ctx, 1)
    fixed = proposer.repair(ctx, first, failure)
    assert isinstance(fixed, Proposal) and fixed.source == SEED
    messages = fake_llm.requests[1]["messages"]
    assert messages[:2] == fake_llm.requests[0]["messages"]
    assert messages[2] == {"role": "assistant", "content": GOOD.strip()}
    assert messages[3]["role"] == "user" and failure in messages[3]["content"]


def test_repair_of_a_candidate_without_transcript(fake_llm: FakeLLM) -> None:
    fake_llm.push({"reply": GOOD})
    failed = Proposal(source="def softmax(x):\n    return x\n", name="mine.py")
    make_proposer(fake_llm).repair(make_ctx(), failed, "provenance: no Triton kernel launched")
    roles = [m["role"] for m in fake_llm.requests[0]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert "return x" in fake_llm.requests[0]["messages"][2]["content"]


def test_fake_server_runs_as_a_process(tmp_path: Path) -> None:
    from openai import OpenAI

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"reply": "hello"}], "default": {"status": 500}}))
    log = tmp_path / "requests.jsonl"
    proc, url = spawn(script, tmp_path / "port", log)
    try:
        client = OpenAI(base_url=url, api_key="EMPTY", max_retries=0)
        msg = [{"role": "user", "content": "hi"}]
        reply = client.chat.completions.create(model="m", messages=msg)  # type: ignore[arg-type]
        assert reply.choices[0].message.content == "hello"
        assert json.loads(log.read_text())["messages"] == msg
    finally:
        proc.kill()
        proc.wait()


def test_extract_code_takes_the_last_block_that_defines_the_entry() -> None:
    reply = (
        "First try:\n```python\ndef softmax(x):\n    return 1\n```\n"
        "A helper:\n```python\ndef helper():\n    pass\n```\n"
        "Better:\n```python\ndef softmax(x):\n    return 2\n```\nDone."
    )
    assert extract_code(reply, "softmax") == "def softmax(x):\n    return 2\n"


def test_extract_code_without_a_block_is_none() -> None:
    assert extract_code(PROSE, "softmax") is None
    assert extract_code("", "softmax") is None
    assert extract_code("```bash\npip install triton\n```", "softmax") is None


def test_extract_code_accepts_py_and_keeps_what_does_not_parse() -> None:
    assert extract_code("```py\ndef softmax(x):\n    return x\n```", "softmax") is not None
    # Clearly meant as Python: the verifier, not the extractor, reports the syntax error.
    assert extract_code("```python\ndef softmax(x) return\n```", "softmax") == (
        "def softmax(x) return\n"
    )
    # No block defines the entry: the largest python block.
    small, large = "x = 1\n", "import torch\n\ndef other(y):\n    return y\n"
    assert extract_code(f"```python\n{large}```\n```python\n{small}```", "softmax") == large


def test_extract_code_unfenced() -> None:
    code = "import torch\n\n\ndef softmax(x):\n    return x\n"
    assert extract_code(f"Here:\n```\n{code}```\n", "softmax") == code
    assert extract_code(code, "softmax") == code
    assert extract_code("```\n$ make all\n```", "softmax") is None


def test_extract_code_ignores_drafts_in_thinking() -> None:
    reply = "<think>\n```python\ndef softmax(x):\n    return 0\n```\n</think>\nNo code today."
    assert extract_code(reply, "softmax") is None
