"""The LGOS pipe for Open WebUI, without Open WebUI: ledger building from chat history, settings
encoding from chat variables, and stream events mapped to Open WebUI's events against Responses
streams recorded through the stack's LiteLLM gateway (``streams/*.json``).

The pipe module is loaded from its file, as Open WebUI does; only the gateway client is replaced
by one that replays a recorded stream and keeps every request it was given. The plain logic it
runs on lives in ``lgos_ui.open_webui`` and is imported from there.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from lgos_ui import LIMITED_NOTICE, InterruptCall, PendingReview
from lgos_ui.catalog import entry_from_extension
from lgos_ui.open_webui import (
    ChatState,
    ChatStore,
    Exchange,
    ask_user_arguments,
    card_answer,
    matched_prefix,
    rebuild_ledger,
    review_markdown,
    suggestion_prompts,
    turns_of,
    variables_prompt,
)
from lgos_ui.open_webui.images import InlineImageError, decoded_image
from service_kit.logs import URL_LOGGERS

from tests.support.documents import png_bytes
from tests.support.settings_schema import SCHEMA

ROOT = Path(__file__).resolve().parents[3]
STREAMS = Path(__file__).with_name("streams")


def load_pipe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lgos_pipe", ROOT / "ui/open-webui/lgos_pipe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lgos_pipe"] = module
    spec.loader.exec_module(module)
    return module


P = load_pipe()


def recorded(name: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads((STREAMS / f"{name}.json").read_text())
    return events


class Event:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self.data


class Responses:
    def __init__(self, streams: list[list[dict[str, Any]]]) -> None:
        self.streams = streams
        self.requests: list[dict[str, Any]] = []

    async def create(self, **request: Any) -> AsyncIterator[Event]:
        self.requests.append(request)
        events = self.streams.pop(0)

        async def replay() -> AsyncIterator[Event]:
            for event in events:
                yield Event(event)

        return replay()


class Uploaded:
    def __init__(self, file_id: str) -> None:
        self.id = file_id


class Files:
    """The Files API through the gateway: keeps every upload (name, bytes, media type)."""

    def __init__(self) -> None:
        self.uploads: list[tuple[str, bytes, str]] = []

    async def create(self, *, file: tuple[str, bytes, str], purpose: str) -> Uploaded:
        assert purpose == "user_data"
        self.uploads.append(file)
        return Uploaded(f"file-{len(self.uploads)}")


class Gateway:
    """Stands in for AsyncOpenAI: replays recorded streams, records requests and uploads, and
    the request id each client was made for."""

    def __init__(self, *streams: list[dict[str, Any]]) -> None:
        self.responses = Responses(list(streams))
        self.files = Files()
        self.request_ids: list[str] = []

    def made_for(self, request_id: str) -> Gateway:
        self.request_ids.append(request_id)
        return self

    async def close(self) -> None:
        return None


def catalog_entry(graph: str, **lgos: Any) -> Any:
    return entry_from_extension(
        f"lgos/{graph}",
        {"description": f"{graph} demo", "features": [], "client_settings": {}, **lgos},
    )


SIMPLE = catalog_entry(
    "simple-graph",
    client_settings={
        "json_schema": {
            "type": "object",
            "properties": {k: SCHEMA["properties"][k] for k in ("use_history", "audience")},
        },
        "defaults": {"use_history": False, "audience": "general"},
    },
)


class Run:
    """One pipe request: what it yielded and what it emitted."""

    def __init__(self, pipe: Any, gateway: Gateway) -> None:
        self.pipe = pipe
        self.gateway = gateway
        self.events: list[dict[str, Any]] = []
        self.chunks: list[Any] = []

    async def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    @property
    def text(self) -> str:
        return "".join(c for c in self.chunks if isinstance(c, str))

    @property
    def statuses(self) -> list[str]:
        return [e["data"]["description"] for e in self.events if e["type"] == "status"]

    @property
    def sources(self) -> list[str]:
        return [e["data"]["source"]["url"] for e in self.events if e["type"] == "source"]


@pytest.fixture
def make_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(entry: Any, *streams: list[dict[str, Any]]) -> Run:
        pipe = P.Pipe()
        pipe.valves = pipe.Valves(STATE_DIR=str(tmp_path / "chats"), GATEWAY_API_KEY="sk-test")
        gateway = Gateway(*streams)

        async def catalog() -> list[Any]:
            return [entry]

        monkeypatch.setattr(pipe, "catalog", catalog)
        monkeypatch.setattr(pipe, "openai", gateway.made_for)
        return Run(pipe, gateway)

    return make


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """The pipe shapes its loggers when made, the setup job the root's; other tests get them
    back as they were."""
    names = (*P.LOGGERS, None, "httpx", "httpcore", "httpx2", "httpcore2")
    loggers = [logging.getLogger(name) for name in names]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def ask(run: Run, messages: list[dict[str, Any]], **extra: Any) -> Run:
    async def go() -> None:
        result = await run.pipe.pipe(
            {"model": f"lgos.{extra.pop('graph', 'simple-graph')}", "messages": messages},
            __event_emitter__=run.emit,
            __chat_id__=extra.pop("chat_id", "chat-1"),
            __metadata__=extra.pop("metadata", {}),
            **extra,
        )
        if isinstance(result, str):
            run.chunks.append(result)
            return
        async for chunk in result:
            run.chunks.append(chunk)

    asyncio.run(go())
    return run


# -- ledger ---------------------------------------------------------------------------------------


def test_history_turns_ignore_open_webuis_system_prompt_and_read_content_parts() -> None:
    turns = turns_of(
        [
            {"role": "system", "content": "Audience: {{chat.variables.audience}}"},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "image_url"}]},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "Again"},
        ]
    )
    assert turns == [("Hi", "Hello"), ("Again", "")]


def test_stored_items_replay_unchanged_until_the_history_differs() -> None:
    call = {"type": "function_call", "call_id": "call_1", "name": "lgos_interrupt"}
    state = ChatState(
        exchanges=[
            Exchange("Save it", [{"role": "user", "content": "Save it"}, call]),
            Exchange("Old second", [{"role": "user", "content": "Old second"}]),
        ]
    )
    earlier = [("Save it", "Saved."), ("Edited second", "Answer two")]
    items = rebuild_ledger(earlier, state)
    assert items[:2] == [{"role": "user", "content": "Save it"}, call]
    # From the edited turn on, Open WebUI's text stands in for the stored items.
    assert items[2:] == [
        {"role": "user", "content": "Edited second"},
        {"role": "assistant", "content": "Answer two"},
    ]
    assert [e.user for e in matched_prefix(earlier, state)] == ["Save it"]


def test_a_chat_from_before_the_pipe_replays_as_text() -> None:
    items = rebuild_ledger([("Hi", "Hello")], ChatState())
    assert items == [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]


def test_the_store_round_trips_and_survives_a_hostile_chat_id(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    review = PendingReview("resp_1", "lgos/x", (InterruptCall("call_1", '{"question":"Ok?"}'),))
    state = ChatState([Exchange("Hi", [{"role": "user", "content": "Hi"}])], review, {"a": "b"})
    store.save("../../etc/passwd\x00", state)
    assert [p.parent for p in tmp_path.iterdir()] == [tmp_path]
    loaded = store.load("../../etc/passwd\x00")
    assert loaded.to_json() == state.to_json()
    assert store.load("never-seen").to_json() == ChatState().to_json()


# -- settings -------------------------------------------------------------------------------------


def test_settings_are_declared_as_chat_variables_open_webui_can_parse() -> None:
    prompt = variables_prompt(SIMPLE)
    # Open WebUI's own pattern for chat variables (open_webui/utils/chat_variables.py).
    found = dict(re.findall(r"{{\s*chat\.variables\.([^\s|}]+)(?:\s*\|\s*([^}]*))?\s*}}", prompt))
    assert set(found) == {"use_history", "audience"}
    assert found["audience"].startswith('select:options=["general", "beginner", "expert"]')
    assert ":default=general" in found["audience"]
    assert found["use_history"].startswith("checkbox")


def test_only_changed_settings_travel_as_metadata_and_never_as_prompt(make_pipe: Any) -> None:
    run = ask(
        make_pipe(SIMPLE, recorded("status-events")),
        [{"role": "system", "content": "Audience: expert"}, {"role": "user", "content": "Hi"}],
        metadata={"chat_variables": {"audience": "expert", "use_history": "false"}},
    )
    request = run.gateway.responses.requests[0]
    assert request["metadata"] == {
        "conversation_id": "chat-1",
        "lgos_settings": '{"audience":"expert"}',
    }
    assert request["input"] == [{"role": "user", "content": "Hi"}]  # no system prompt
    assert request["model"] == "lgos/simple-graph" and request["stream"] is True


def test_defaults_send_no_settings(make_pipe: Any) -> None:
    run = ask(
        make_pipe(SIMPLE, recorded("status-events")),
        [{"role": "user", "content": "Hi"}],
        metadata={"chat_variables": {"audience": "general", "use_history": True}},
    )
    assert json.loads(run.gateway.responses.requests[0]["metadata"]["lgos_settings"]) == {
        "use_history": True
    }


# -- stream events → Open WebUI events -------------------------------------------------------------


def test_commentary_becomes_status_lines_and_only_the_answer_is_text(make_pipe: Any) -> None:
    run = ask(make_pipe(SIMPLE, recorded("status-events")), [{"role": "user", "content": "Hi"}])
    assert run.statuses == ["Reading the question", "Drafting the answer"]
    assert all(e["data"]["done"] for e in run.events)
    assert run.text.startswith("[offline-model: deterministic stand-in, not a real model]")
    assert "Reading the question" not in run.text


def test_citations_become_clickable_sources(make_pipe: Any) -> None:
    run = ask(make_pipe(SIMPLE, recorded("citation-events")), [{"role": "user", "content": "Hi"}])
    assert run.sources == [
        "https://docs.langchain.com/oss/python/langgraph/persistence",
        "https://docs.langchain.com/oss/python/langgraph/interrupts",
    ]
    source = next(e for e in run.events if e["type"] == "source")["data"]
    assert source["source"]["name"] == "LangGraph persistence"
    assert source["metadata"][0]["url"] == source["source"]["url"]


def test_server_tools_are_selected_and_their_activity_shown(make_pipe: Any) -> None:
    entry = catalog_entry("server-tools", server_tools=["package_version", "web_search"])
    run = ask(
        make_pipe(entry, recorded("server-tools")),
        [{"role": "user", "content": "Search the web for langgraph interrupts"}],
        graph="server-tools",
    )
    assert {"type": "web_search"} in run.gateway.responses.requests[0]["tools"]
    assert any(s.startswith("Web search: searched the web for") for s in run.statuses)
    assert run.sources and all(u.startswith("http") for u in run.sources)


def test_refusal_and_incomplete_are_shown_as_such(make_pipe: Any) -> None:
    entry = catalog_entry("response-outcomes")
    refused = ask(make_pipe(entry, recorded("refusal")), [{"role": "user", "content": "x"}])
    assert refused.text.startswith("**Refused:** ")
    partial = ask(make_pipe(entry, recorded("incomplete")), [{"role": "user", "content": "x"}])
    assert "⚠️ The answer is incomplete (max_output_tokens)." in partial.text
    assert partial.text.index("⚠️") > 0  # the partial text is kept before the notice


def test_a_graph_without_its_extension_still_chats_with_a_notice(make_pipe: Any) -> None:
    run = ask(
        make_pipe(SIMPLE, recorded("status-events")),
        [{"role": "user", "content": "Hi"}],
        graph="stripped",
    )
    assert run.gateway.responses.requests[0]["model"] == "lgos/stripped"
    assert "tools" not in run.gateway.responses.requests[0]
    assert run.statuses[0] == LIMITED_NOTICE
    assert run.text.startswith("[offline-model")


def test_background_tasks_never_run_a_graph(make_pipe: Any) -> None:
    run = ask(
        make_pipe(SIMPLE),
        [{"role": "user", "content": "Hi"}],
        __task__="title_generation",
    )
    assert run.gateway.responses.requests == [] and run.text == ""


# -- reviews --------------------------------------------------------------------------------------

APPROVAL = catalog_entry("interruptible-approval", features=["background", "interrupts"])


def pause(make_pipe: Any) -> tuple[Run, dict[str, Any]]:
    first = make_pipe(APPROVAL, recorded("interrupt"), recorded("interrupt-resume"))
    ask(
        first,
        [{"role": "user", "content": "Rename the project to Atlas"}],
        graph="interruptible-approval",
    )
    card = [c for c in first.chunks if isinstance(c, dict)]
    assert len(card) == 1
    return first, card[0]


def test_an_interrupt_is_stored_first_then_asked_on_the_card(make_pipe: Any) -> None:
    run, chunk = pause(make_pipe)
    paused = recorded("interrupt")[-1]["response"]
    call = next(i for i in paused["output"] if i["type"] == "function_call")
    state = run.pipe.store().load("chat-1")
    assert state.review is not None and state.review.response_id == paused["id"]
    assert [c.call_id for c in state.review.calls] == [call["call_id"]]
    # The tool-call trap: the only call Open WebUI sees is its own ask_user card.
    tool_call = chunk["choices"][0]["delta"]["tool_calls"][0]
    assert tool_call["function"]["name"] == "ask_user" and tool_call["id"] == call["call_id"]
    question = json.loads(tool_call["function"]["arguments"])["questions"][0]
    assert question["question"].startswith("Approve this change?")
    assert [o["label"] for o in question["options"]] == ["approve", "reject"]
    assert "lgos_interrupt" not in json.dumps(chunk)
    assert "Review requested" in run.text and "Rename the project to Atlas" in run.text


# As Open WebUI 0.12.4 stores the card's answer (read back from its database).
OPTION = {"type": "option", "option_index": 0, "label": "approve", "description": "Go ahead."}


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"status": "answered", "answers": {"review": OPTION}}),
        json.dumps({"status": "answered", "answers": {"review": "approve"}}),
    ],
)
def test_the_card_answer_resumes_the_paused_response(make_pipe: Any, content: str) -> None:
    run, chunk = pause(make_pipe)
    call_id = chunk["choices"][0]["delta"]["tool_calls"][0]["id"]
    history = [
        {"role": "user", "content": "Rename the project to Atlas"},
        {"role": "assistant", "content": "Review requested", "tool_calls": [{"id": call_id}]},
        {"role": "tool", "tool_call_id": call_id, "content": content},
    ]
    run.chunks.clear()
    ask(run, history, graph="interruptible-approval")
    resume = run.gateway.responses.requests[-1]
    assert resume["model"] == "lgos/interruptible-approval"
    assert resume["previous_response_id"] == recorded("interrupt")[-1]["response"]["id"]
    assert resume["input"] == [
        {"type": "function_call_output", "call_id": call_id, "output": "approve"}
    ]
    assert "Decision: approved." in run.text
    state = run.pipe.store().load("chat-1")
    assert state.review is None
    # The interrupt exchange stays in the ledger for later turns.
    kinds = [i.get("type") for i in state.exchanges[-1].items]
    assert kinds.count("function_call") == 1 and kinds.count("function_call_output") == 1


def test_a_dismissed_card_leaves_the_review_for_the_next_message(make_pipe: Any) -> None:
    run, chunk = pause(make_pipe)
    call_id = chunk["choices"][0]["delta"]["tool_calls"][0]["id"]
    dismissed = [
        {"role": "user", "content": "Rename the project to Atlas"},
        {"role": "tool", "tool_call_id": call_id, "content": "Error: tool call rejected by user."},
    ]
    run.chunks.clear()
    ask(run, dismissed, graph="interruptible-approval")
    assert "The review is still open" in run.text
    assert len(run.gateway.responses.requests) == 1  # nothing was sent
    run.chunks.clear()
    ask(run, [*dismissed, {"role": "user", "content": "approve"}], graph="interruptible-approval")
    assert run.gateway.responses.requests[-1]["input"][0]["output"] == "approve"
    assert "Decision: approved." in run.text


def test_card_answers_are_read_from_every_shape() -> None:
    def tool(content: str) -> list[dict[str, Any]]:
        return [{"role": "tool", "content": content}]

    assert card_answer([{"role": "user", "content": "approve"}]) is None
    assert card_answer(tool('{"status": "cancelled", "answers": {}, "timed_out": true}')) == ""
    other = {
        "status": "answered",
        "answers": {"review": {"type": "other", "text": "Only the docs"}},
    }
    assert card_answer(tool(json.dumps(other))) == "Only the docs"


def test_a_note_review_shows_the_filename_and_the_exact_draft_as_markdown() -> None:
    # advanced-graph's payload: the draft is multi-line Markdown, the filename a short field.
    draft = "# Retries need idempotency keys\n\n- one key per request\n- replayed safely\n"
    payload = {
        "question": "Save this note to shared knowledge? Approve, reject, or describe a change.",
        "filename": "note-retries-need-idempotency-keys-72141a8c.md",
        "content": draft,
        "choices": ["approve", "reject"],
        "allow_other": True,
    }
    call = InterruptCall("call_note", json.dumps(payload))
    shown = review_markdown(call)
    assert "**Filename:** note-retries-need-idempotency-keys-72141a8c.md" in shown
    # The exact draft, contained: a quoted block (rendered as Markdown) with small headings.
    assert (
        "**Content**\n\n> #### Retries need idempotency keys\n>\n> - one key per request\n"
        "> - replayed safely" in shown
    )
    card = ask_user_arguments(call)["questions"][0]
    assert [o["label"] for o in card["options"]] == ["approve", "reject"]
    assert card["allow_other"] is True  # the card's *Other* field carries a revision
    assert card["question"] == payload["question"]


def test_a_refused_setting_is_shown_to_the_person(make_pipe: Any) -> None:
    import openai
    import openai._base_client as base

    transport = getattr(base, "httpx2", None) or base.httpx  # the HTTP library openai wraps
    response = transport.Response(400, request=transport.Request("POST", "http://gw/v1/responses"))
    refused = openai.BadRequestError(
        "Error code: 400",
        response=response,
        body={"error": {"message": "lgos_settings: audience must be one of general, expert"}},
    )
    run = make_pipe(SIMPLE)

    async def create(**request: Any) -> Any:
        run.gateway.responses.requests.append(request)
        raise refused

    run.gateway.responses.create = create  # type: ignore[method-assign]
    ask(run, [{"role": "user", "content": "Hi"}], metadata={"chat_variables": {"audience": "x"}})
    assert "⚠️ The gateway answered 400: lgos_settings: audience must be one of" in run.text


# -- example prompts ------------------------------------------------------------------------------


def load_installer() -> ModuleType:
    path = ROOT / "ui/open-webui/install_pipe.py"
    spec = importlib.util.spec_from_file_location("lgos_install_pipe", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples_become_the_model_entrys_own_suggestion_prompts() -> None:
    long = "Search the web: how do LangGraph interrupts pause a run? Cite your sources."
    entry = entry_from_extension(
        "lgos/advanced-graph",
        {
            "description": "d",
            "features": [],
            "examples": [{"label": "Chat", "prompt": "Hi."}, {"label": "Web", "prompt": long}],
        },
    )
    prompts = suggestion_prompts(entry)
    assert prompts[0] == {"title": ["Chat", "Hi."], "content": "Hi."}
    label, hint = prompts[1]["title"]
    assert label == "Web" and hint.endswith("…") and len(hint) <= 48
    assert long.startswith(hint[:-1]) and prompts[1]["content"] == long  # the whole prompt is sent
    form = load_installer().model_form(entry)
    assert form["meta"]["suggestion_prompts"] == prompts
    # A graph without examples gets an empty list: no generic Open WebUI suggestions either.
    assert load_installer().model_form(SIMPLE)["meta"]["suggestion_prompts"] == []
    limited = entry_from_extension("lgos/x", None)
    assert load_installer().model_form(limited)["meta"]["suggestion_prompts"] == []


# -- inline images --------------------------------------------------------------------------------

READER = catalog_entry("advanced-graph", features=["file_inputs"])


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def with_images(text: str, *urls: str) -> dict[str, Any]:
    """A user message as Open WebUI sends it to a vision model: text, then image parts."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts.extend({"type": "image_url", "image_url": {"url": url}} for url in urls)
    return {"role": "user", "content": parts}


def test_vision_is_declared_only_for_graphs_reading_attachments() -> None:
    installer = load_installer()
    assert installer.model_form(READER)["meta"]["capabilities"]["vision"] is True
    assert installer.model_form(SIMPLE)["meta"]["capabilities"]["vision"] is False
    limited = entry_from_extension("lgos/x", None)
    assert installer.model_form(limited)["meta"]["capabilities"]["vision"] is False


def test_an_inline_image_is_uploaded_and_sent_as_an_input_file(make_pipe: Any) -> None:
    png = png_bytes(120, 80)
    run = make_pipe(READER, recorded("status-events"), recorded("status-events"))
    messages = [{"role": "system", "content": "x"}, with_images("What is this?", data_url(png))]
    ask(run, messages, graph="advanced-graph")
    ((name, data, mime),) = run.gateway.files.uploads
    assert data == png and mime == "image/png" and name.endswith(".png")
    sent = run.gateway.responses.requests[0]["input"][-1]
    assert sent["content"] == [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_file", "file_id": "file-1"},
    ]
    assert f"Attached {name} for the graph" in run.statuses
    # Regenerating the answer sends the same image again: it is not uploaded twice.
    ask(run, messages, graph="advanced-graph")
    assert len(run.gateway.files.uploads) == 1
    assert run.gateway.responses.requests[1]["input"][-1] == sent


def test_only_the_latest_messages_images_are_uploaded(make_pipe: Any) -> None:
    first, second = png_bytes(2, 2), png_bytes(3, 3)
    run = make_pipe(READER, recorded("status-events"))
    messages = [
        with_images("old", data_url(first)),
        {"role": "assistant", "content": "An answer"},
        with_images("new", data_url(second), data_url(first, "image/png")),
    ]
    ask(run, messages, graph="advanced-graph")
    assert [data for _, data, _ in run.gateway.files.uploads] == [second, first]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://example.com/cat.png", "only images sent inline"),
        (data_url(b"%PDF-1.7 hello", "application/pdf"), "application/pdf is not a PNG, JPEG"),
        (data_url(b"<svg/>", "image/svg+xml"), "image/svg+xml is not a PNG, JPEG"),
        ("data:image/png;base64,not*base64!", "not valid base64"),
        ("data:image/png;base64,", "the image is empty"),
        ("data:image/png,rawbytes", "only images sent inline"),
        (data_url(b"\x89PNG" + b"\x00" * (10 * 1024 * 1024)), "larger than the 10 MB limit"),
    ],
)
def test_a_bad_or_oversized_data_url_is_refused_and_nothing_is_sent(
    make_pipe: Any, url: str, why: str
) -> None:
    run = make_pipe(READER, recorded("status-events"))
    ask(run, [with_images("Look", data_url(png_bytes(1, 1)), url)], graph="advanced-graph")
    assert run.text.startswith("⚠️ The image could not be attached: ")
    assert why in run.text and "Nothing was sent." in run.text
    assert "Traceback" not in run.text
    assert run.gateway.files.uploads == [] and run.gateway.responses.requests == []


def test_the_size_limit_is_checked_before_decoding() -> None:
    # Not even base64: had it been decoded, the error would say so.
    huge = "data:image/png;base64," + "!" * (4 * 1024 * 1024)
    with pytest.raises(InlineImageError, match="larger than the 2 MB limit"):
        decoded_image(huge, limit=2 * 1024 * 1024)
    assert decoded_image(data_url(png_bytes(1, 1))).mime == "image/png"


# -- log lines ------------------------------------------------------------------------------------

PROMPT = "axolotl-prompt-3390"


def test_a_turn_logs_json_lines_with_the_request_id_its_client_sends(
    make_pipe: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url_levels = [logging.getLogger(name).level for name in URL_LOGGERS]
    run = make_pipe(SIMPLE, recorded("status-events"))
    ask(run, [{"role": "user", "content": PROMPT}])
    err = capsys.readouterr().err
    assert PROMPT not in err and "sk-test" not in err
    turn, response = (json.loads(line) for line in err.splitlines() if line.startswith('{"ts"'))
    assert list(turn)[:4] == list(response)[:4] == ["ts", "level", "logger", "event"]
    assert (turn["logger"], turn["event"]) == ("lgos_pipe", "turn")
    assert (response["logger"], response["event"]) == ("lgos_ui", "response")
    assert turn["request_id"] == response["request_id"] == run.gateway.request_ids[0]
    assert re.fullmatch(r"req_[0-9a-f]{32}", turn["request_id"])
    assert response["model"] == "lgos/simple-graph" and response["status"] == "completed"
    # Open WebUI's own loggers are left as they were.
    assert [logging.getLogger(name).level for name in URL_LOGGERS] == url_levels
    assert not logging.getLogger("lgos_ui").propagate


def test_the_gateway_client_sends_the_request_id() -> None:
    client = P.Pipe().openai("req_pipe-1")
    assert client.default_headers["X-Request-Id"] == "req_pipe-1"


def test_the_setup_job_reports_a_failure_as_a_json_line_without_secrets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WEBUI_ADMIN_EMAIL", "admin@lgos.local")
    monkeypatch.setenv("WEBUI_ADMIN_PASSWORD", "pw-setup-secret-81")
    monkeypatch.setenv("OPENAI_GATEWAY_API_KEY", "sk-gateway-setup-secret-52")
    monkeypatch.delenv("LGOS_LOG_LEVEL", raising=False)
    # Nothing listens on port 9 (discard): Open WebUI never answers.
    assert load_installer().main(["--url", "http://127.0.0.1:9", "--wait", "0"]) == 1
    err = capsys.readouterr().err
    [line] = [json.loads(text) for text in err.splitlines() if text.startswith('{"ts"')]
    assert (line["level"], line["logger"]) == ("error", "lgos_open_webui_setup")
    assert line["event"] == "open-webui setup failed" and "not healthy" in line["error"]
    assert "secret" not in err


def test_the_setup_job_reports_what_it_changed_as_json_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installer = load_installer()
    monkeypatch.setenv("WEBUI_ADMIN_EMAIL", "admin@lgos.local")
    monkeypatch.setenv("WEBUI_ADMIN_PASSWORD", "pw-setup-secret-81")
    monkeypatch.setenv("OPENAI_GATEWAY_API_KEY", "sk-gateway-setup-secret-52")
    # Open WebUI's side stands in: each step says what it changed.
    monkeypatch.setattr(installer, "wait_ready", lambda client, timeout: None)
    monkeypatch.setattr(installer, "sign_in", lambda client, email, password: None)
    monkeypatch.setattr(installer, "read_catalog", lambda url, key, kind: [SIMPLE])
    changed = {"created": False, "updated": True, "activated": False}
    monkeypatch.setattr(installer, "install", lambda client, content, valves: changed)
    models = {"created": ["lgos.simple-graph"], "updated": [], "removed": []}
    monkeypatch.setattr(installer, "sync_models", lambda client, entries, graphs: models)
    assert installer.main(["--url", "http://127.0.0.1:9"]) == 0
    err = capsys.readouterr().err
    installed, synced = (json.loads(t) for t in err.splitlines() if t.startswith('{"ts"'))
    assert (installed["event"], installed["changed"]) == ("pipe installed", ["updated"])
    assert (synced["event"], synced["models"]) == ("model entries synced", models)
    assert "secret" not in err
