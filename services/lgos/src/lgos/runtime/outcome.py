"""Reading the canonical outcome off the final AIMessage: text, refusal, incomplete reason,
citations and the client function calls it asks for."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson
from langchain_core.messages import AIMessage

from lgos.runtime.events import Citation, FunctionCall, IncompleteReason, RunOutcome, Usage

_RESPONSES_REASONS: dict[str, IncompleteReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}
_CITATION_TYPES = ("url_citation", "citation")


class OutputError(ValueError):
    """The graph's final message breaks the output contract (a graph bug, reported as 500)."""


def refusal_of(message: AIMessage) -> str | None:
    """A refusal from content blocks, or from the OpenAI Chat provider's ``additional_kwargs``."""
    parts: list[str] = []
    if isinstance(message.content, list):
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "refusal":
                refusal = block.get("refusal") or block.get("text")
                if isinstance(refusal, str):
                    parts.append(refusal)
    if not parts:
        refusal = message.additional_kwargs.get("refusal")
        if isinstance(refusal, str) and refusal:
            parts.append(refusal)
    return "".join(parts) if parts else None


def incomplete_reason_of(message: AIMessage) -> IncompleteReason | None:
    """Chat ``finish_reason`` or Responses ``incomplete_details`` kept in ``response_metadata``."""
    metadata: dict[str, Any] = message.response_metadata or {}
    finish_reason = metadata.get("finish_reason")
    if finish_reason in ("length", "content_filter"):
        return finish_reason  # type: ignore[no-any-return]
    if metadata.get("status") == "incomplete":
        details = metadata.get("incomplete_details") or {}
        return _RESPONSES_REASONS.get(str(details.get("reason")), "length")
    return None


def citations_of(message: AIMessage) -> list[Citation]:
    """``url_citation`` (OpenAI) or ``citation`` (LangChain standard) annotations on text blocks.

    Offsets become relative to the whole answer text; each span is checked against its block.
    """
    if not isinstance(message.content, list):
        return []
    citations: list[Citation] = []
    offset = 0
    for block in message.content:
        if isinstance(block, str):
            offset += len(block)
            continue
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        text = str(block.get("text", ""))
        for annotation in block.get("annotations") or ():
            if isinstance(annotation, dict) and annotation.get("type") in _CITATION_TYPES:
                citation = _citation(annotation, text)
                citations.append(
                    Citation(
                        citation.url,
                        citation.title,
                        citation.start_index + offset,
                        citation.end_index + offset,
                    )
                )
        offset += len(text)
    return citations


def _citation(annotation: dict[str, Any], text: str) -> Citation:
    url, title = annotation.get("url"), annotation.get("title") or ""
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if not isinstance(url, str) or not url or not isinstance(title, str):
        raise OutputError("a citation needs a url and a string title")
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start <= end < len(text):
        raise OutputError(f"citation span {start}..{end} is outside its text block")
    cited = annotation.get("cited_text")
    if cited is not None and cited != text[start : end + 1]:
        raise OutputError("cited_text does not match the cited span")
    return Citation(url, title, start, end)


def function_calls_of(message: AIMessage, offered: Collection[str]) -> list[FunctionCall]:
    """Calls to client functions the request offered; anything else in the final message is a
    graph bug (server tools must have run before the answer)."""
    calls: list[FunctionCall] = []
    for call in message.tool_calls:
        if call["name"] not in offered:
            raise OutputError(
                f"final message calls {call['name']!r}, which the client did not offer"
            )
        calls.append(
            FunctionCall(str(call["id"]), call["name"], orjson.dumps(call["args"]).decode())
        )
    for invalid in message.invalid_tool_calls:
        name = invalid.get("name") or ""
        if name not in offered:
            raise OutputError(f"final message calls {name!r}, which the client did not offer")
        calls.append(
            FunctionCall(str(invalid.get("id")), name, invalid.get("args") or "", complete=False)
        )
    return calls


def outcome_of(
    message: AIMessage | None, usage: Usage | None, offered: Collection[str] = ()
) -> RunOutcome:
    if message is None:
        return RunOutcome(text="", usage=usage)
    outcome = RunOutcome(
        text=message.text,
        refusal=refusal_of(message),
        incomplete_reason=incomplete_reason_of(message),
        usage=usage,
        citations=citations_of(message),
        function_calls=function_calls_of(message, offered),
    )
    if outcome.incomplete_reason is None and any(not c.complete for c in outcome.function_calls):
        raise OutputError("truncated function arguments on a message that is not incomplete")
    return outcome
