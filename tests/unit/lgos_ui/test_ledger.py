from __future__ import annotations

from lgos_ui.ledger import InputLedger, function_calls, output_items, user_message


def test_user_turns_with_files_are_input_file_parts() -> None:
    assert user_message("hi") == {"role": "user", "content": "hi"}
    assert user_message("read", ["file-a"]) == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "read"},
            {"type": "input_file", "file_id": "file-a"},
        ],
    }


def test_output_items_are_appended_unchanged_then_function_outputs() -> None:
    output = [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "Thinking", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "f",
            "arguments": "{}",
            "status": "completed",
        },
    ]
    ledger = InputLedger()
    ledger.add_user("go")
    ledger.add_output(output_items({"output": output}))
    ledger.add_function_output("c1", '{"ok":true}')
    assert ledger.items[1:3] == output
    assert ledger.items[3] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": '{"ok":true}',
    }
    restored = InputLedger.loads(ledger.dumps())
    assert restored.items == ledger.items
    # A snapshot is a copy: sending it never mutates the ledger.
    snapshot = ledger.snapshot()
    snapshot[0]["content"] = "changed"
    assert ledger.items[0]["content"] == "go"


def test_function_calls_exclude_names() -> None:
    output = [
        {"type": "function_call", "call_id": "a", "name": "lgos_interrupt", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "display_file", "arguments": "{}"},
        {"type": "message", "content": []},
    ]
    assert [c["call_id"] for c in function_calls(output, exclude=["lgos_interrupt"])] == ["b"]


def test_garbage_never_breaks_loading() -> None:
    assert InputLedger.loads(None).items == []
    assert InputLedger.loads("{oops").items == []
    assert InputLedger.loads('{"a": 1}').items == []
    assert InputLedger.loads('[1, {"role": "user", "content": "x"}]').items == [
        {"role": "user", "content": "x"}
    ]
