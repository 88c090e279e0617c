from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable

import pytest

try:  # the Anthropic SDK moved from httpx to its successor httpx2; use whichever it ships with
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

from ihmt_navigator import (
    AnthropicSummarizer,
    ChildText,
    HeuristicSummarizer,
    Summarizer,
    SummarizerError,
    summarizer_for,
)
from ihmt_navigator._summarize import keywords_of

Handler = Callable[[httpx.Request], httpx.Response]

CHILDREN = [
    ChildText(
        id="L-1",
        kind="leaf",
        title="t1",
        text="We moved the falcon billing to Stripe. Webhooks retry with backoff.",
        time_start="2025-06-11T00:00:00Z",
        time_end="2025-06-11T00:00:00Z",
    ),
    ChildText(
        id="L-2",
        kind="leaf",
        title="t2",
        text="Stripe invoices for falcon close on the 1st.",
        time_start="2025-07-01T00:00:00Z",
        time_end="2025-07-01T00:00:00Z",
    ),
]


def _reply(payload: dict[str, object]) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": json.dumps(payload)}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        },
    )


def _summarizer(handler: Handler, api_key: str | None = "test-key") -> AnthropicSummarizer:
    """The real SDK over a fake HTTP transport: no network, everything else real."""
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return AnthropicSummarizer(
        "claude-test", api_key=api_key, client_options={"http_client": client}
    )


def test_the_heuristic_is_deterministic_and_names_the_span() -> None:
    first = HeuristicSummarizer().summarize(CHILDREN, domain="decisions", layer=1)
    again = HeuristicSummarizer().summarize(CHILDREN, domain="decisions", layer=1)
    assert first == again
    assert first.backend == "heuristic"
    assert first.title.endswith("2025-06-11 → 2025-07-01")
    assert "Stripe" in first.title
    assert "Stripe" in first.summary
    assert "the" not in [k.lower() for k in first.keywords]


def test_spanish_stop_words_never_become_keywords() -> None:
    words = keywords_of("Migramos la base de datos de facturas a PostgreSQL en marzo de 2025")
    assert not {"de", "la", "en", "a"} & set(words)
    assert "PostgreSQL" in words


def test_the_anthropic_backend_uses_the_models_reply() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        sent = request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
        assert "test-key" in sent
        return _reply(
            {
                "title": "Falcon billing on Stripe",
                "summary": "Billing moved to Stripe.",
                "keywords": ["Stripe", "billing"],
            }
        )

    summarizer = _summarizer(handler)
    assert isinstance(summarizer, Summarizer)
    result = summarizer.summarize(CHILDREN, domain="decisions", layer=1)
    assert result.backend == "anthropic"
    assert result.title == "Falcon billing on Stripe · 2025-06-11 → 2025-07-01"
    assert result.keywords == ("Stripe", "billing")
    assert seen[0]["model"] == "claude-test"
    assert "falcon billing" in json.dumps(seen[0]["messages"]).lower()


def _server_error(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        500, json={"type": "error", "error": {"type": "api_error", "message": "boom"}}
    )


def _useless_json(request: httpx.Request) -> httpx.Response:
    return _reply({"nothing": "useful"})


def _not_json(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, text="not json at all")


def _network_down(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("no route to host", request=request)


@pytest.mark.parametrize(
    "handler",
    [_server_error, _useless_json, _not_json, _network_down],
    ids=["server-error", "unusable-json", "not-json", "network-error"],
)
def test_every_failure_falls_back_to_the_heuristic(
    handler: Handler, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        result = _summarizer(handler).summarize(CHILDREN, domain="decisions", layer=1)
    assert result.backend == "heuristic"
    assert result.summary
    assert "anthropic summarizer failed" in caplog.text


def test_no_api_key_falls_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with caplog.at_level(logging.WARNING):
        result = _summarizer(_useless_json, api_key=None).summarize(CHILDREN, domain="d", layer=1)
    assert result.backend == "heuristic"
    assert "ANTHROPIC_API_KEY" in caplog.text


def test_no_sdk_falls_back_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail for real
    with caplog.at_level(logging.WARNING):
        result = AnthropicSummarizer("m", api_key="k").summarize(CHILDREN, domain="d", layer=1)
    assert result.backend == "heuristic"
    assert "pip install 'ihmt-navigator[anthropic]'" in caplog.text


def test_summarizer_for_knows_its_backends() -> None:
    assert summarizer_for("heuristic").name == "heuristic"
    assert summarizer_for("anthropic", model="m").name == "anthropic"
    with pytest.raises(SummarizerError, match="unknown summarizer backend"):
        summarizer_for("gpt")
