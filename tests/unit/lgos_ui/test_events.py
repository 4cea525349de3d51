"""Stream mapping over Responses event sequences shaped as LGOS sends them (through LiteLLM)."""

from __future__ import annotations

from typing import Any

from lgos_ui.events import (
    AnswerDelta,
    Citation,
    Commentary,
    Finished,
    ProgressNotes,
    RefusalDelta,
    StreamMapper,
    ToolActivity,
    answer_text,
    citations_of,
    finished,
)

URL = "http://127.0.0.1:3005/corpus/langgraph-interrupts"


def message(item_id: str, phase: str | None, text: str = "", **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "message", "id": item_id, "role": "assistant", "content": []}
    if phase:
        item["phase"] = phase
    if text:
        item["content"] = [
            {"type": "output_text", "text": text, "annotations": extra.get("annotations", [])}
        ]
    return item


def stream(*events: dict[str, Any]) -> list[Any]:
    mapper = StreamMapper()
    return [ui for event in events for ui in mapper.feed(event)]


def test_commentary_is_kept_apart_from_the_answer() -> None:
    answer = message("msg_a", "final_answer", "Hello there")
    events = stream(
        {"type": "response.created", "response": {"status": "in_progress"}},
        {"type": "response.output_item.added", "item": message("msg_c", "commentary")},
        {"type": "response.output_text.delta", "item_id": "msg_c", "delta": "Reading"},
        {"type": "response.output_item.done", "item": message("msg_c", "commentary", "Reading")},
        {"type": "response.output_item.added", "item": message("msg_a", "final_answer")},
        {"type": "response.output_text.delta", "item_id": "msg_a", "delta": "Hello"},
        {"type": "response.output_text.delta", "item_id": "msg_a", "delta": " there"},
        {"type": "response.output_item.done", "item": answer},
        {
            "type": "response.completed",
            "response": {
                "id": "resp_1",
                "status": "completed",
                "output": [message("msg_c", "commentary", "Reading"), answer],
            },
        },
    )
    assert events[:3] == [
        Commentary("msg_c", "Reading"),
        AnswerDelta("Hello"),
        AnswerDelta(" there"),
    ]
    done = events[-1]
    assert (
        isinstance(done, Finished) and done.outcome == "completed" and done.response_id == "resp_1"
    )
    assert answer_text(done.output) == "Hello there"


def test_citations_are_reported_once_and_only_for_web_urls() -> None:
    annotation = {
        "type": "url_citation",
        "url": URL,
        "title": "Interrupts",
        "start_index": 0,
        "end_index": 4,
    }
    events = stream(
        {"type": "response.output_item.added", "item": message("m", None)},
        {"type": "response.output_text.delta", "item_id": "m", "delta": "Pause"},
        {"type": "response.output_text.annotation.added", "item_id": "m", "annotation": annotation},
        {"type": "response.output_text.annotation.added", "item_id": "m", "annotation": annotation},
        {
            "type": "response.output_text.annotation.added",
            "item_id": "m",
            "annotation": {"type": "url_citation", "url": "javascript:alert(1)"},
        },
    )
    assert events == [AnswerDelta("Pause"), Citation(URL, "Interrupts")]
    output = [message("m", "final_answer", "Pause", annotations=[annotation])]
    assert citations_of(output) == [Citation(URL, "Interrupts")]


def test_tool_items_become_activity() -> None:
    web = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "langgraph interrupts"},
    }
    custom = {
        "type": "custom_tool_call",
        "call_id": "c1",
        "name": "package_version",
        "input": "langgraph",
    }
    events = stream(
        {"type": "response.output_item.done", "item": web},
        {"type": "response.output_item.done", "item": custom},
    )
    assert [(e.kind, e.name) for e in events if isinstance(e, ToolActivity)] == [
        ("web_search_call", "web_search"),
        ("custom_tool_call", "package_version"),
    ]
    assert "langgraph interrupts" in events[0].summary  # type: ignore[union-attr]


def test_refusal_incomplete_and_failed_keep_partial_text() -> None:
    events = stream(
        {"type": "response.output_item.added", "item": message("m", "final_answer")},
        {"type": "response.refusal.delta", "item_id": "m", "delta": "I can't"},
        {"type": "response.failed", "response": {"status": "failed", "error": {"message": "boom"}}},
    )
    assert events[0] == RefusalDelta("I can't")
    assert isinstance(events[1], Finished) and events[1].outcome == "failed"
    assert "boom" in events[1].message
    incomplete = finished(
        {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    )
    assert incomplete.outcome == "incomplete" and "max_output_tokens" in incomplete.message
    assert finished({"status": "cancelled"}).outcome == "cancelled"
    assert stream({"type": "error", "message": "gone"})[0] == Finished("error", {}, "gone")


def test_a_message_that_arrives_whole_is_shown_once() -> None:
    whole = message("m", "final_answer", "All at once")
    assert stream({"type": "response.output_item.done", "item": whole}) == [
        AnswerDelta("All at once")
    ]
    streamed = stream(
        {"type": "response.output_item.added", "item": message("m", "final_answer")},
        {"type": "response.output_text.delta", "item_id": "m", "delta": "All at once"},
        {"type": "response.output_item.done", "item": whole},
    )
    assert streamed == [AnswerDelta("All at once")]


def test_a_responses_commentary_is_working_then_collapsed_as_how_i_got_there() -> None:
    notes = ProgressNotes()
    assert not notes.finish()  # no commentary: nothing to show or close
    notes.add("Choosing sources")
    notes.add(" Searching the web\n")
    assert (notes.label, notes.collapsed) == ("Working…", False)
    assert notes.markdown() == "- Choosing sources\n- Searching the web"
    assert notes.finish()
    assert (notes.label, notes.collapsed) == ("How I got there", True)
    assert not notes.finish()  # ended once
