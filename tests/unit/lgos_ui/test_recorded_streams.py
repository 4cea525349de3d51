"""lgos_ui over Responses streams recorded through the stack's LiteLLM gateway (streams/*.jsonl:
the OpenAI SDK's events dumped with ``exclude_unset``, as the UIs feed them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lgos_ui.events import (
    AnswerDelta,
    Commentary,
    Finished,
    RefusalDelta,
    StreamMapper,
    ToolActivity,
    UIEvent,
    answer_text,
)
from lgos_ui.ledger import InputLedger
from lgos_ui.review import pending_review

STREAMS = Path(__file__).parent / "streams"


def replay(name: str) -> tuple[StreamMapper, list[UIEvent]]:
    mapper = StreamMapper()
    events: list[UIEvent] = []
    for line in (STREAMS / f"{name}.jsonl").read_text().splitlines():
        event: dict[str, Any] = json.loads(line)
        events.extend(mapper.feed(event))
    return mapper, events


def last(events: list[UIEvent]) -> Finished:
    done = events[-1]
    assert isinstance(done, Finished)
    return done


def test_status_events_commentary_stays_out_of_the_answer() -> None:
    mapper, events = replay("status_events")
    notes = [e.text for e in events if isinstance(e, Commentary)]
    assert notes == ["Reading the question", "Drafting the answer"]
    deltas = [e.text for e in events if isinstance(e, AnswerDelta)]
    assert len(deltas) > 5 and "".join(deltas) == mapper.answer
    done = last(events)
    assert done.outcome == "completed"
    assert answer_text(done.output) == mapper.answer
    assert "Reading the question" not in mapper.answer


def test_web_search_tool_item_and_citations() -> None:
    mapper, events = replay("web_search_citations")
    tools = [e for e in events if isinstance(e, ToolActivity)]
    assert [(t.kind, t.name) for t in tools] == [("web_search_call", "web_search")]
    assert "langgraph interrupts" in tools[0].summary.lower()
    urls = [c.url for c in mapper.citations]
    assert "https://docs.langchain.com/oss/python/langgraph/interrupts" in urls
    assert len(urls) == len(set(urls))


def test_an_interrupt_pause_becomes_a_review_and_replays_in_the_ledger() -> None:
    _, events = replay("interrupt_pause")
    done = last(events)
    review = pending_review(done.response_id or "", "lgos/interruptible-approval", done.output)
    assert review is not None and len(review.calls) == 1
    (call,) = review.calls
    assert call.question.startswith("Approve this change? Proposed change: Rename the project")
    assert call.choices == ["approve", "reject"] and call.allow_other
    ledger = InputLedger()
    ledger.add_user("Rename the project to Atlas")
    ledger.add_output(done.output)
    ledger.items.extend(review.answered(call.call_id, "approve").resume_input())
    assert [i.get("type", "message") for i in ledger.items] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert ledger.items[1]["call_id"] == ledger.items[2]["call_id"] == call.call_id


def test_refusal_failure_and_incomplete_outcomes() -> None:
    refusal_mapper, refusal = replay("refusal")
    assert [e.text for e in refusal if isinstance(e, RefusalDelta)] == [
        "I can't help with that request."
    ]
    assert refusal_mapper.answer == "" and last(refusal).outcome == "completed"
    failure_mapper, failure = replay("failure")
    assert last(failure).outcome == "failed" and failure_mapper.answer  # partial text kept
    incomplete_mapper, incomplete = replay("incomplete")
    done = last(incomplete)
    assert done.outcome == "incomplete" and "max_output_tokens" in done.message
    assert incomplete_mapper.answer.startswith("[offline-model")
