from __future__ import annotations

import json

import pytest
from lgos_ui.review import InterruptCall, PendingReview, answer_from_text, pending_review

NOTE = {
    "question": "Save this note?",
    "choices": ["approve", "reject"],
    "allow_other": True,
    "filename": "retries.md",
    "content": "# Retries\n\nRetries need **idempotency keys**.",
    "meta": {"revision": 2},
}
OUTPUT = [
    {"type": "message", "role": "assistant", "content": []},
    {
        "type": "function_call",
        "call_id": "call_lg_1",
        "name": "lgos_interrupt",
        "arguments": json.dumps(NOTE),
    },
    {"type": "function_call", "call_id": "call_x", "name": "other", "arguments": "{}"},
]


def test_a_paused_response_becomes_a_review_with_exact_ids() -> None:
    review = pending_review("resp_1", "lgos/advanced-graph", OUTPUT)
    assert review is not None
    (call,) = review.calls
    assert call.call_id == "call_lg_1" and call.arguments == json.dumps(NOTE)
    assert call.question == "Save this note?"
    assert call.choices == ["approve", "reject"] and call.allow_other
    markdown = call.content_markdown()
    # The draft is contained: a quoted block whose headings are small.
    assert markdown.startswith("**Filename:** retries.md\n\n**Content**\n\n> #### Retries")
    assert '"revision": 2' in markdown
    assert "Save this note?" not in markdown
    assert pending_review("resp_2", "m", OUTPUT[:1]) is None


def test_resume_input_needs_every_call_answered() -> None:
    calls = (InterruptCall("a", "{}"), InterruptCall("b", "{}"))
    review = PendingReview("resp", "m", calls)
    with pytest.raises(ValueError):
        review.resume_input()
    review = review.answered("a", "approve")
    assert [c.call_id for c in review.unanswered()] == ["b"]
    review = review.answered("b", "Shorter, please")
    assert review.resume_input() == [
        {"type": "function_call_output", "call_id": "a", "output": "approve"},
        {"type": "function_call_output", "call_id": "b", "output": "Shorter, please"},
    ]


def test_reviews_survive_a_json_round_trip_and_reject_garbage() -> None:
    review = pending_review("resp_1", "lgos/x", OUTPUT)
    assert review is not None
    review = review.answered("call_lg_1", "approve")
    assert PendingReview.from_json(json.loads(json.dumps(review.to_json()))) == review
    assert PendingReview.from_json(None) is None
    assert PendingReview.from_json({"response_id": "r"}) is None
    assert PendingReview.from_json({"response_id": "r", "model": "m", "calls": [{}]}) is None


def test_payloads_without_an_envelope_still_render() -> None:
    odd = InterruptCall("c", '"just text"')
    assert odd.question == "Please review." and odd.choices == ["approve", "reject"]
    assert "just text" in odd.content_markdown()
    assert InterruptCall("c", "not json").payload == {}


def test_typed_text_is_a_choice_by_name_else_feedback() -> None:
    call = InterruptCall("c", json.dumps(NOTE))
    assert answer_from_text("  Approve ", call) == "approve"
    assert answer_from_text("make it shorter", call) == "make it shorter"
