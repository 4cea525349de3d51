"""offline-model's deterministic structured output: classification, note drafts, filling."""

from __future__ import annotations

import pytest
from offline_model.answer import LABEL, Prompt
from offline_model.structured import (
    classify,
    json_schema_of,
    note_markdown,
    note_title,
    structured_answer,
)


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("Explain idempotency.", "chat"),
        ("Search the web for LangGraph.", "research"),
        ("Find the interrupt guidance.", "research"),
        ("Can you look it up?", "research"),
        ("Remember this exact note: x.", "save"),
        ("Please note this down.", "save"),
        ("Find my note about retries.", "research"),  # a noun "note" is no save request
        ("Search for retries and save a note of it.", "research_and_save"),
    ],
)
def test_classification_keywords(text: str, intent: str) -> None:
    assert classify(text) == intent


def test_schema_is_filled_by_its_rules() -> None:
    schema = {
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": ["chat", "research", "save", "research_and_save"]},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "items": {"type": "array", "items": {"type": "string"}},
            "echo": {"type": "string"},
        },
    }
    prompt = Prompt(user=["Save this: ship on Friday."])
    assert structured_answer(schema, prompt) == {
        "intent": "save",
        "kind": "a",
        "count": 0,
        "flag": False,
        "items": [],
        "echo": "Save this: ship on Friday.",
    }


def test_note_draft_holds_the_note_and_each_revision_and_the_label() -> None:
    prompt = Prompt(
        user=["Remember this exact note: retries need idempotency keys.", "Mention TTLs."]
    )
    markdown = note_markdown(prompt)
    assert markdown.startswith("# Retries\n\nRetries need idempotency keys.\n")
    assert "- Revision: Mention TTLs." in markdown
    assert LABEL in markdown
    draft = structured_answer(
        {
            "type": "object",
            "properties": {"title": {"type": "string"}, "markdown": {"type": "string"}},
        },
        prompt,
    )
    assert draft == {"title": "Retries", "markdown": markdown}


@pytest.mark.parametrize(
    ("request_text", "title", "sentence"),
    [
        (
            "Remember this note: the staging password rotates every 30 days.",
            "Staging password",
            "The staging password rotates every 30 days.",
        ),
        (
            "Save a note: the staging bucket is temporary",
            "Staging bucket",
            "The staging bucket is temporary.",
        ),
        (
            "Note this down: the release notes live in the wiki.",
            "Release notes",
            "The release notes live in the wiki.",
        ),
        ("remember that we deploy on Fridays", "We deploy", "We deploy on Fridays."),
        # All subject: a title made of it would only say the note again.
        ("Remember: buy milk", "Note", "Buy milk."),
    ],
)
def test_a_note_draft_is_a_title_then_a_body_that_does_not_repeat_it(
    request_text: str, title: str, sentence: str
) -> None:
    prompt = Prompt(user=[request_text])
    assert note_title(prompt) == title
    heading, blank, body, *_ = note_markdown(prompt).split("\n")
    assert (heading, blank, body) == (f"# {title}", "", sentence)
    assert body.rstrip(".").lower() != title.lower()


def test_only_json_schema_formats_are_structured() -> None:
    assert json_schema_of({"text": {"format": {"type": "text"}}}) is None
    assert json_schema_of({}) is None
    schema = {"type": "object", "properties": {}}
    assert json_schema_of({"text": {"format": {"type": "json_schema", "schema": schema}}}) == schema


def test_a_note_of_an_attached_file_lists_its_key_points_and_names_it() -> None:
    request = (
        "Save the key points of this file as a note. [attachment file-9]\n\n"
        "Attached file report.pdf (file-9):\n# Quarterly report\nRevenue grew 12 percent. "
        "Costs fell.\n\n- Hiring paused\nOffice moves in May.\nA sixth point.\nA seventh.\n"
    )
    prompt = Prompt(user=[request, "Mention the audit."])
    markdown = note_markdown(prompt)
    assert markdown.splitlines()[:10] == [
        "# Key points of report.pdf",
        "",
        "From report.pdf (file-9):",
        "",
        "- Quarterly report",
        "- Revenue grew 12 percent.",
        "- Costs fell.",
        "- Hiring paused",
        "- Office moves in May.",
        "",
    ]
    assert "A sixth point." not in markdown
    assert "- Revision: Mention the audit." in markdown and LABEL in markdown
    schema = {"properties": {"title": {"type": "string"}, "markdown": {"type": "string"}}}
    assert structured_answer(schema, prompt)["title"] == "Key points of report.pdf"


def test_an_unreadable_attachment_leaves_the_note_to_the_request() -> None:
    request = (
        "Remember this file: quarterly figures.\n\n"
        "[Attached file r.pdf (file-9): a PDF, but it is encrypted with a password.]\n"
    )
    markdown = note_markdown(Prompt(user=[request]))
    title, body = markdown.split("\n\n")[:2]
    assert title.startswith("# ") and "Key points" not in title
    assert body == "Quarterly figures."
