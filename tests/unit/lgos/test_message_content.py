"""The GenAI-conventions shape of the messages an opted-in ``chat`` span records."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from lgos.runtime.content import input_messages, output_messages


def test_input_messages_keep_roles_tool_calls_and_results_in_order() -> None:
    sent = [
        SystemMessage("Be brief."),
        HumanMessage(
            [
                {"type": "text", "text": "What is on this page?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KG"}},
            ]
        ),
        AIMessage("", tool_calls=[{"id": "c1", "name": "search", "args": {"q": "otters"}}]),
        ToolMessage("3 results", tool_call_id="c1"),
    ]
    assert json.loads(input_messages(sent)) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {
            "role": "user",
            # An image is named by its type only: its bytes never reach a span.
            "parts": [{"type": "text", "content": "What is on this page?"}, {"type": "image_url"}],
        },
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"q": "otters"}}
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": "3 results"}],
        },
    ]


def test_output_messages_carry_a_conventional_finish_reason() -> None:
    answered = AIMessage("Done.", response_metadata={"status": "completed"})
    cut = AIMessage("Half", response_metadata={"finish_reason": "length"})
    calling = AIMessage("", tool_calls=[{"id": "c2", "name": "search", "args": {}}])
    reasons = [m["finish_reason"] for m in json.loads(output_messages([answered, cut, calling]))]
    assert reasons == ["stop", "length", "tool_call"]
