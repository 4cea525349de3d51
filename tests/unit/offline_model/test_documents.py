"""offline-model reading file parts that carry their bytes (Responses ``input_file`` and Chat
``file`` with ``file_data``): described by name, kind and size, paired with their
``Attached PDF`` line, listed in echo mode."""

from __future__ import annotations

import base64

from offline_model.answer import echo_answer
from offline_model.compose import readable_answer
from offline_model.prompts import chat_prompt, responses_prompt

PDF = b"%PDF-1.7\n" + b"x" * 91
DATA_URL = "data:application/pdf;base64," + base64.b64encode(PDF).decode()
MARKER = "What is in it?\n\nAttached PDF r.pdf (file-1): 1 pages, sent as file input.\n"


def test_a_responses_input_file_is_paired_with_its_line_and_echoed() -> None:
    prompt = responses_prompt(
        {
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": MARKER},
                        {"type": "input_file", "filename": "r.pdf", "file_data": DATA_URL},
                    ],
                }
            ]
        }
    )
    assert prompt.documents == ["a PDF file r.pdf of 100 bytes"]
    assert prompt.files == []  # no file id: the bytes came inline
    answer = readable_answer(prompt)
    assert (
        "I received the attached PDF r.pdf (file-1) as file input: a PDF file r.pdf of 100 bytes."
    ) in answer
    assert "File inputs: a PDF file r.pdf of 100 bytes." in echo_answer(prompt)


def test_a_chat_file_part_and_undecodable_data_are_described_without_a_line() -> None:
    content = [
        {"type": "text", "text": "Read these."},
        {"type": "file", "file": {"filename": "a.pdf", "file_data": DATA_URL}},
        {"type": "file", "file": {"filename": "b.bin", "file_data": "data:x;base64,@@"}},
        {"type": "file", "file": {"file_id": "file-9"}},
    ]
    prompt = chat_prompt([{"role": "user", "content": content}])
    assert prompt.documents == [
        "a PDF file a.pdf of 100 bytes",
        "a file b.bin whose data I could not decode",
    ]
    assert prompt.files == ["file-9"]
    answer = readable_answer(prompt)
    assert "I received a PDF file a.pdf of 100 bytes as file input." in answer
    earlier = chat_prompt([{"role": "user", "content": content}, {"role": "user", "content": "x"}])
    assert earlier.documents == []  # only the latest message's files are answered
