"""advanced-graph's knowledge results as its answering model reads them: one line per hit."""

from __future__ import annotations

from lgos_demo_graphs.advanced.knowledge import KnowledgeHit
from lgos_demo_graphs.advanced.research import render_hits


def test_a_note_with_a_title_heading_is_one_line_with_its_body() -> None:
    hits = [
        KnowledgeHit(
            "file-1", "note-staging.md", "# Staging password\n\nRotates every 30 days.\n", 0.9
        ),
        KnowledgeHit("file-2", "note-retries.md", "Retries need keys.", 0.5),
    ]
    assert render_hits(hits).splitlines() == [
        "[K1] note-staging.md (file id file-1): Staging password: Rotates every 30 days.",
        "[K2] note-retries.md (file id file-2): Retries need keys.",
    ]


def test_no_hits_say_so() -> None:
    assert render_hits([]) == "No knowledge results."
