from __future__ import annotations

from langchain_core.messages import AIMessage
from lgos.runtime.events import Usage
from lgos.runtime.outcome import incomplete_reason_of, outcome_of, refusal_of


def test_refusal_from_content_blocks_and_additional_kwargs() -> None:
    blocks = AIMessage(content=[{"type": "refusal", "refusal": "no"}])
    assert refusal_of(blocks) == "no"
    kwargs = AIMessage(content="", additional_kwargs={"refusal": "nope"})
    assert refusal_of(kwargs) == "nope"
    assert refusal_of(AIMessage(content="fine")) is None


def test_incomplete_reasons() -> None:
    assert (
        incomplete_reason_of(AIMessage(content="", response_metadata={"finish_reason": "length"}))
        == "length"
    )
    assert (
        incomplete_reason_of(
            AIMessage(content="", response_metadata={"finish_reason": "content_filter"})
        )
        == "content_filter"
    )
    responses_style = AIMessage(
        content="",
        response_metadata={
            "status": "incomplete",
            "incomplete_details": {"reason": "content_filter"},
        },
    )
    assert incomplete_reason_of(responses_style) == "content_filter"
    assert (
        incomplete_reason_of(AIMessage(content="", response_metadata={"finish_reason": "stop"}))
        is None
    )


def test_outcome_text_excludes_refusal_blocks() -> None:
    message = AIMessage(
        content=[{"type": "text", "text": "part"}, {"type": "refusal", "refusal": "r"}]
    )
    outcome = outcome_of(message, Usage(1, 2, 3))
    assert outcome.text == "part" and outcome.refusal == "r"
    assert outcome_of(None, None).text == ""


def test_citations_are_offset_across_text_blocks_and_validated() -> None:
    import pytest
    from lgos.runtime.outcome import OutputError, citations_of

    message = AIMessage(
        content=[
            {"type": "text", "text": "See "},
            {
                "type": "text",
                "text": "https://a.example/ now",
                "annotations": [
                    {
                        "type": "citation",
                        "url": "https://a.example/",
                        "title": "A",
                        "start_index": 0,
                        "end_index": 17,
                        "cited_text": "https://a.example/",
                    }
                ],
            },
        ]
    )
    [citation] = citations_of(message)
    assert (citation.start_index, citation.end_index) == (4, 21)
    assert message.text[citation.start_index : citation.end_index + 1] == "https://a.example/"
    wrong = AIMessage(
        content=[
            {
                "type": "text",
                "text": "abc",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url": "u",
                        "title": "t",
                        "start_index": 0,
                        "end_index": 1,
                        "cited_text": "zz",
                    }
                ],
            }
        ]
    )
    with pytest.raises(OutputError):
        citations_of(wrong)
