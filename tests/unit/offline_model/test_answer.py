from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from offline_model.answer import LABEL, Prompt, tokenize
from offline_model.compose import compose_answer


@given(st.text())
def test_tokens_concatenate_back(text: str) -> None:
    assert "".join(tokenize(text)) == text


def test_echo_answer_quotes_latest_user_message_and_names_inputs() -> None:
    prompt = Prompt(
        instructions=["Be brief."],
        user=["first", "latest?"],
        assistant=["a"],
        tool_outputs=["42"],
        files=["file-1"],
    )
    answer = compose_answer(prompt, echo=True)
    assert answer.startswith(LABEL)
    assert 'You said: "latest?"' in answer
    assert 'Instructions: "Be brief."' in answer
    assert 'Tool outputs: "42"' in answer
    assert "Files: file-1." in answer
    assert "Earlier messages: 2." in answer
    assert compose_answer(prompt, echo=True) == answer  # deterministic
