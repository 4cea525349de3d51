"""advanced-graph through a real LGOS process and the strict OpenAI SDK, against the real Files
service (files and a knowledge vector store), SearXNG over its seeded corpus, and offline-model.

Every path of the spec: plain chat, attachments, cited research with Web and [K#] knowledge
results, the tool_choice overrides, a client function round trip, save → review → approve /
revise / reject, and streaming commentary.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import openai
import pytest
from offline_model.answer import LABEL
from openai import AsyncOpenAI

from tests.support.advanced import (
    CALCULATE_SUM,
    MODEL,
    advanced_lgos,
    answer_review,
    citations,
    create_knowledge,
    demo_env,
    note_files,
    review_payload,
    seed_note,
    store_file_ids,
)
from tests.support.clients import sdk_client, sdk_fixture
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import FilesProcess, files_client
from tests.support.servers import Server

SEEDED_NOTE = "note-retry-budget.md"
SEEDED_TEXT = "Retry budget: background jobs retry three times with idempotency keys."


@pytest.fixture(scope="module")
async def files(files_process: FilesProcess) -> AsyncIterator[AsyncOpenAI]:
    async with files_client(f"{files_process.server.url}/v1") as sdk:
        yield sdk


@pytest.fixture(scope="module")
async def knowledge(files: AsyncOpenAI) -> tuple[str, str]:
    """A fresh knowledge store holding one reviewed note: (store id, note file id)."""
    store_id = await create_knowledge(files, "advanced-graph-contract")
    return store_id, await seed_note(files, store_id, SEEDED_NOTE, SEEDED_TEXT)


@pytest.fixture(scope="module")
def serve_advanced(
    offline_model: Server, searxng: Server, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, str | None, str], AbstractContextManager[Server]]:
    """Starts an LGOS process serving advanced-graph on a Files service URL and knowledge store."""

    def start(files_url: str, store_id: str | None, name: str) -> AbstractContextManager[Server]:
        env = demo_env(offline_model, searxng, files_url, store_id, FILES_KEY)
        return advanced_lgos(tmp_path_factory.mktemp(name), env)

    return start


@pytest.fixture(scope="module")
def lgos(
    serve_advanced: Any, files_process: FilesProcess, knowledge: tuple[str, str]
) -> Iterator[Server]:
    with serve_advanced(files_process.server.url, knowledge[0], "advanced") as server:
        yield server


@pytest.fixture(scope="module")
def lgos_without_knowledge(serve_advanced: Any, files_process: FilesProcess) -> Iterator[Server]:
    with serve_advanced(files_process.server.url, None, "advanced-no-knowledge") as server:
        yield server


@pytest.fixture(scope="module")
def lgos_readable(
    readable_model: Server,
    searxng: Server,
    files_process: FilesProcess,
    knowledge: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """advanced-graph on offline-model's readable answers (no echo), as a person meets it."""
    env = demo_env(readable_model, searxng, files_process.server.url, knowledge[0], FILES_KEY)
    with advanced_lgos(tmp_path_factory.mktemp("advanced-readable"), env) as server:
        yield server


client = sdk_fixture("lgos")
bare_client = sdk_fixture("lgos_without_knowledge")
readable = sdk_fixture("lgos_readable")


async def respond(client: AsyncOpenAI, input_items: Any, **options: Any) -> Any:
    return await client.responses.create(model=MODEL, input=input_items, store=False, **options)


def with_file(text: str, file_id: str) -> list[dict[str, Any]]:
    """One user message: the text, then the attachment."""
    content = [{"type": "input_text", "text": text}, {"type": "input_file", "file_id": file_id}]
    return [{"role": "user", "content": content}]


def searxng_urls(searxng: Server, query: str) -> set[str]:
    page = httpx.get(f"{searxng.url}/search", params={"q": query, "format": "json"}, timeout=10)
    return {str(result["url"]) for result in page.json()["results"]}


async def streamed(client: AsyncOpenAI, input_items: Any, **options: Any) -> list[Any]:
    stream = await respond(client, input_items, stream=True, **options)
    return [event async for event in stream]


def commentary(events: list[Any]) -> list[str]:
    return [
        e.item.content[0].text
        for e in events
        if e.type == "response.output_item.done" and getattr(e.item, "phase", None) == "commentary"
    ]


# --- discovery and protocol ----------------------------------------------------------------


async def test_catalog_entry_advertises_the_four_features_and_web_search(
    client: AsyncOpenAI,
) -> None:
    lgos = (await client.models.retrieve(MODEL)).model_extra["lgos"]  # type: ignore[index]
    assert lgos["features"] == ["client_events", "file_inputs", "interrupts", "mcp_tools"]
    assert lgos["server_tools"] == ["web_search"]
    assert lgos["client_tools"] == []


async def test_catalog_lists_the_showcase_examples_one_per_path(client: AsyncOpenAI) -> None:
    listed = {m.id: m for m in (await client.models.list()).data}
    examples = listed[MODEL].model_extra["lgos"]["examples"]  # type: ignore[index]
    retrieved = (await client.models.retrieve(MODEL)).model_extra["lgos"]  # type: ignore[index]
    assert retrieved["examples"] == examples
    assert [e["label"] for e in examples] == [
        "Chat",
        "Ask about a file",
        "Research the web",
        "Save a note",
        "Find a saved note",
        "Query the demo database",
    ]
    assert all(set(e) == {"label", "prompt"} and e["prompt"] for e in examples)


async def test_chat_completions_is_refused(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hello"}]
        )
    assert caught.value.status_code == 400


# --- chat ------------------------------------------------------------------------------------


async def test_plain_chat_has_no_commentary_and_no_tool_calls(client: AsyncOpenAI) -> None:
    prompt = "Explain why idempotency matters in two short paragraphs."
    response = await respond(client, prompt, tools=[{"type": "web_search"}])
    assert [item.type for item in response.output] == ["message"]  # search available ≠ research
    assert response.output_text.startswith(LABEL)
    assert prompt in response.output_text
    assert "No external source returned evidence" not in response.output_text
    assert response.usage is not None and response.usage.total_tokens > 0
    # Usage covers every call: the private classification's output as well as the answer's.
    assert response.usage.output_tokens > len(response.output_text.split())

    events = await streamed(client, prompt)
    assert commentary(events) == []
    streamed_text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert '"intent"' not in streamed_text  # the private classification never streams
    assert streamed_text == events[-1].response.output_text
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [(i.type, i.phase) for i in done] == [("message", "final_answer")]
    assert events[-1].type == "response.completed"


async def test_file_attachment_is_answered_from_its_content(
    client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    uploaded = await files.files.create(
        file=("brief.txt", b"The project marker is FILE_INPUT_OK."), purpose="user_data"
    )
    try:
        response = await respond(client, with_file("Summarize this file.", uploaded.id))
    finally:
        await files.files.delete(uploaded.id)
    assert [item.type for item in response.output] == ["message"]
    assert "FILE_INPUT_OK" in response.output_text
    assert f"brief.txt ({uploaded.id})" in response.output_text


async def test_attaching_a_file_does_not_add_it_to_knowledge(
    client: AsyncOpenAI, files: AsyncOpenAI, knowledge: tuple[str, str]
) -> None:
    before = await store_file_ids(files, knowledge[0])
    uploaded = await files.files.create(
        file=("private.txt", b"PRIVATE_TEXT_42"), purpose="user_data"
    )
    try:
        response = await respond(
            client,
            with_file("Search the web for LangGraph interrupts.", uploaded.id),
            tools=[{"type": "web_search"}],
        )
    finally:
        await files.files.delete(uploaded.id)
    search = next(item for item in response.output if item.type == "web_search_call")
    assert "PRIVATE_TEXT_42" not in search.action.query  # private text never shapes the query
    assert "PRIVATE_TEXT_42" in response.output_text  # but the answering node read the file
    assert await store_file_ids(files, knowledge[0]) == before


async def test_calculate_sum_round_trip(client: AsyncOpenAI) -> None:
    ledger: list[Any] = [{"role": "user", "content": "Add 12, 30, and 5."}]
    called = await respond(
        client,
        ledger,
        tools=[CALCULATE_SUM],
        tool_choice={"type": "function", "name": "calculate_sum"},
    )
    call = next(item for item in called.output if item.type == "function_call")
    assert call.name == "calculate_sum"
    arguments = json.loads(call.arguments)
    assert arguments == {"numbers": [12, 30, 5]}
    ledger.extend(item.model_dump(exclude_none=True) for item in called.output)
    ledger.append(
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": json.dumps({"total": sum(arguments["numbers"])}),
        }
    )
    completed = await respond(client, ledger, tools=[CALCULATE_SUM])
    assert [item.type for item in completed.output] == ["message"]
    assert '{"total": 47}' in completed.output_text  # the tool's output reached the model


# --- tool_choice overrides -------------------------------------------------------------------


async def test_named_function_choice_selects_chat_even_for_a_search_request(
    client: AsyncOpenAI,
) -> None:
    response = await respond(
        client,
        "Search the web for 12 and 30.",
        tools=[CALCULATE_SUM, {"type": "web_search"}],
        tool_choice={"type": "function", "name": "calculate_sum"},
    )
    assert [item.type for item in response.output] == ["function_call"]
    assert response.output[0].name == "calculate_sum"


async def test_required_with_web_search_selects_research(client: AsyncOpenAI) -> None:
    response = await respond(
        client,
        "Tell me about LangGraph interrupt guidance.",  # no search words: chat without the override
        tools=[{"type": "web_search"}],
        tool_choice="required",
    )
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    assert citations(response)


async def test_none_disables_client_functions_and_both_searches(client: AsyncOpenAI) -> None:
    response = await respond(
        client,
        "Search the web and my knowledge for the retry budget, calculate sum 1 2.",
        tools=[CALCULATE_SUM, {"type": "web_search"}],
        tool_choice="none",
    )
    assert [item.type for item in response.output] == ["message"]
    assert "[K1]" not in response.output_text
    assert citations(response) == []


# --- research --------------------------------------------------------------------------------


async def test_research_cites_web_urls_searxng_returned_and_knowledge_as_k_labels(
    client: AsyncOpenAI, searxng: Server, knowledge: tuple[str, str]
) -> None:
    response = await respond(
        client,
        "Search the web and my knowledge for LangGraph durable execution idempotency keys.",
        tools=[{"type": "web_search"}],
    )
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    query = response.output[0].action.query
    urls = citations(response)
    assert urls and set(urls) <= searxng_urls(searxng, query)
    message = response.output[1].content[0]
    for annotation in message.annotations:
        assert message.text[annotation.start_index : annotation.end_index + 1] == annotation.url
    _, note_id = knowledge
    assert f"[K1] {SEEDED_NOTE} (file id {note_id})" in response.output_text
    assert not any(note_id in url or SEEDED_NOTE in url for url in urls)  # [K#], never a URL


async def test_research_without_any_source_says_no_source_returned_evidence(
    bare_client: AsyncOpenAI,
) -> None:
    response = await respond(bare_client, "Search for the retry budget.")
    assert [item.type for item in response.output] == ["message"]
    assert "No external source returned evidence" in response.output_text


async def test_streaming_commentary_comes_before_the_final_answer(client: AsyncOpenAI) -> None:
    events = await streamed(
        client, "Search the web for LangGraph streaming modes.", tools=[{"type": "web_search"}]
    )
    assert commentary(events) == ["Choosing sources", "Searching the web"]
    kinds = [e.type for e in events]
    final = next(
        e.item.id
        for e in events
        if e.type == "response.output_item.added"
        and e.item.type == "message"
        and e.item.phase == "final_answer"
    )
    first_delta = next(
        i
        for i, e in enumerate(events)
        if e.type == "response.output_text.delta" and e.item_id == final
    )
    last_commentary = max(
        i
        for i, e in enumerate(events)
        if e.type == "response.output_item.done" and getattr(e.item, "phase", None) == "commentary"
    )
    assert last_commentary < first_delta
    assert kinds.index("response.web_search_call.completed") < first_delta
    assert events[-1].type == "response.completed"
    assert events[-1].response.usage is not None


# --- notebook --------------------------------------------------------------------------------


async def test_save_review_approve_stores_an_indexed_note_later_research_finds(
    client: AsyncOpenAI, files: AsyncOpenAI, knowledge: tuple[str, str]
) -> None:
    store_id, _ = knowledge
    before = {f.id for f in await note_files(files)}
    pending = await respond(client, "Remember this exact note: retries need idempotency keys.")
    assert pending.status == "completed"
    payload = review_payload(pending)
    assert set(payload) == {"question", "filename", "content", "choices", "allow_other"}
    assert payload["choices"] == ["approve", "reject"] and payload["allow_other"] is True
    assert payload["filename"].startswith("note-") and payload["filename"].endswith(".md")
    # A title, then the note as a sentence (the title does not repeat it).
    assert payload["content"].startswith("# Retries\n\nRetries need idempotency keys.\n")
    assert LABEL in payload["content"]  # the draft says who wrote it
    assert {f.id for f in await note_files(files)} == before  # nothing written before review

    completed = await respond(
        client, answer_review(pending, "approve"), previous_response_id=pending.id
    )
    assert "it is indexed, so later research can find it" in completed.output_text
    new = [f for f in await note_files(files) if f.id not in before]
    assert [f.filename for f in new] == [payload["filename"]]
    stored = await files.files.content(new[0].id)
    assert stored.content == payload["content"].encode()  # the exact approved bytes
    assert new[0].id in await store_file_ids(files, store_id)
    assert f"file id {new[0].id}" in completed.output_text

    found = await respond(client, "Search my knowledge for retries idempotency keys.")
    assert f"{payload['filename']} (file id {new[0].id})" in found.output_text


async def test_feedback_redrafts_under_the_same_identity_then_one_file(
    client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    before = {f.id for f in await note_files(files)}
    first = await respond(client, "Save a note: deploys happen on Tuesdays.")
    draft = review_payload(first)
    second = await respond(
        client,
        answer_review(first, "Also mention the freeze in December."),
        previous_response_id=first.id,
    )
    redraft = review_payload(second)
    assert second.id != first.id
    assert redraft["filename"] == draft["filename"]
    assert "Deploys happen on Tuesdays." in redraft["content"]
    assert "Also mention the freeze in December." in redraft["content"]
    assert "freeze" not in draft["content"]
    assert {f.id for f in await note_files(files)} == before  # still nothing written

    done = await respond(client, answer_review(second, "approve"), previous_response_id=second.id)
    new = [f for f in await note_files(files) if f.id not in before]
    assert [f.filename for f in new] == [draft["filename"]]
    assert (await files.files.content(new[0].id)).content == redraft["content"].encode()
    assert "Saved the approved note" in done.output_text


async def test_reject_uploads_nothing(client: AsyncOpenAI, files: AsyncOpenAI) -> None:
    before = [f.id async for f in files.files.list()]
    pending = await respond(client, "Remember this: the staging password rotates weekly.")
    rejected = await respond(
        client, answer_review(pending, "reject"), previous_response_id=pending.id
    )
    assert rejected.output_text == "Rejected: the note was not saved, and nothing was stored."
    assert [f.id async for f in files.files.list()] == before
    with pytest.raises(openai.ConflictError):  # the run is finished: no second answer
        await respond(client, answer_review(pending, "approve"), previous_response_id=pending.id)


async def test_streamed_save_shows_drafting_then_pauses(client: AsyncOpenAI) -> None:
    events = await streamed(client, "Please remember: the on-call rota changes on Mondays.")
    assert commentary(events) == ["Drafting the note"]
    final = events[-1].response
    assert events[-1].type == "response.completed"
    assert [item.type for item in final.output if item.type == "function_call"] == ["function_call"]
    assert review_payload(final)["filename"].startswith("note-")


async def test_research_and_save_searches_then_reviews_then_answers(
    client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    before = {f.id for f in await note_files(files)}
    pending = await respond(
        client,
        "Search the web for LangGraph persistence checkpointers and save a note of it.",
        tools=[{"type": "web_search"}],
    )
    assert [item.type for item in pending.output] == ["web_search_call", "function_call"]
    payload = review_payload(pending)
    assert payload["filename"].startswith("note-")
    done = await respond(client, answer_review(pending, "approve"), previous_response_id=pending.id)
    assert [item.type for item in done.output] == ["message"]  # the search is not reported twice
    assert "Saved the approved note" in done.output_text  # the answer knows the note's fate
    assert "https://docs.langchain.com/oss/python/langgraph/persistence" in done.output_text
    assert "https://docs.langchain.com/oss/python/langgraph/persistence" in citations(done)
    new = [f for f in await note_files(files) if f.id not in before]
    assert [f.filename for f in new] == [payload["filename"]]


# --- failures stay errors ------------------------------------------------------------------


@pytest.fixture(scope="module")
def lgos_files_down(serve_advanced: Any) -> Iterator[Server]:
    """Knowledge configured, but nothing listens where the Files service should be."""
    from tests.support.servers import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    with serve_advanced(dead, "vs_unreachable", "advanced-files-down") as server:
        yield server


async def test_files_service_failures_are_errors_not_refusals(lgos_files_down: Server) -> None:
    async with sdk_client(f"{lgos_files_down.url}/v1") as client:
        chat = await respond(client, "Hello.")  # chat needs no Files service
        assert chat.status == "completed"
        with pytest.raises(openai.InternalServerError) as caught:
            await respond(client, with_file("Summarize this file.", "file-abc"))
        assert caught.value.status_code == 500
        assert caught.value.message.endswith("Internal server error")  # no details leak
        with pytest.raises(openai.InternalServerError):
            await respond(client, "Search my knowledge for anything.")
        pending = await respond(client, "Remember this: the Files service is down.")
        with pytest.raises(openai.InternalServerError):  # retried, then reported, never hidden
            await respond(
                client, answer_review(pending, "approve"), previous_response_id=pending.id
            )


async def test_streamed_approval_reports_saving_then_the_outcome(client: AsyncOpenAI) -> None:
    pending = await respond(client, "Save a note: streamed approvals report progress.")
    events = await streamed(
        client, answer_review(pending, "approve"), previous_response_id=pending.id
    )
    assert commentary(events) == ["Saving the approved note", "Indexing the note"]
    assert events[-1].type == "response.completed"
    final = events[-1].response
    assert final.previous_response_id == pending.id
    answer = final.output[-1]
    assert answer.phase == "final_answer"
    text = "".join(
        e.delta for e in events if e.type == "response.output_text.delta" and e.item_id == answer.id
    )
    assert text == answer.content[0].text
    assert text.startswith("Saved the approved note as note-")


# --- knowledge not configured ----------------------------------------------------------------


async def test_without_knowledge_chat_files_search_and_tools_work_and_save_stores_nothing(
    bare_client: AsyncOpenAI, files: AsyncOpenAI, searxng: Server
) -> None:
    chat = await respond(bare_client, "Hello there.")
    assert [item.type for item in chat.output] == ["message"]

    uploaded = await files.files.create(file=("b.txt", b"MARKER_B"), purpose="user_data")
    try:
        read = await respond(bare_client, with_file("What does it say?", uploaded.id))
    finally:
        await files.files.delete(uploaded.id)
    assert "MARKER_B" in read.output_text

    research = await respond(
        bare_client,
        "Search the web and my knowledge for LangGraph persistence checkpointers.",
        tools=[{"type": "web_search"}],
    )
    assert [item.type for item in research.output] == ["web_search_call", "message"]
    assert set(citations(research)) <= searxng_urls(searxng, research.output[0].action.query)
    assert citations(research) and "[K1]" not in research.output_text

    called = await respond(
        bare_client,
        "Add 2 and 3.",
        tools=[CALCULATE_SUM],
        tool_choice={"type": "function", "name": "calculate_sum"},
    )
    assert called.output[0].type == "function_call"

    before = [f.id async for f in files.files.list()]
    saved = await respond(bare_client, "Remember this exact note: nothing to see.")
    assert [item.type for item in saved.output] == ["message"]  # no review: nothing can be stored
    assert saved.output_text.startswith("Nothing was stored")
    assert [f.id async for f in files.files.list()] == before


# --- the one-shot knowledge job ------------------------------------------------------------


def test_knowledge_job_creates_the_store_once_and_reuses_it_by_name(
    files_process: FilesProcess, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import subprocess
    import sys

    from tests.support.files import API_KEY
    from tests.support.servers import ROOT

    name = f"knowledge-job-{tmp_path_factory.getbasetemp().name}"
    id_file = tmp_path_factory.mktemp("knowledge-job") / "vector-store-id"
    env = {
        "PATH": "/usr/bin:/bin",
        "DEMO_API_FILES_BASE_URL": f"{files_process.server.url}/v1",
        "DEMO_API_FILES_API_KEY": API_KEY,
        "DEMO_API_VECTOR_STORE_NAME": name,
    }
    command = [sys.executable, "-m", "lgos_demo_graphs.advanced.knowledge_setup"]
    first = subprocess.run(
        [*command, "--id-file", str(id_file)], env=env, capture_output=True, text=True, cwd=ROOT
    )
    assert first.returncode == 0, first.stderr
    store_id = first.stdout.strip()
    assert store_id.startswith("vs_") and id_file.read_text().strip() == store_id
    again = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0 and again.stdout.strip() == store_id
    headers = {"Authorization": f"Bearer {API_KEY}"}
    stores = httpx.get(f"{files_process.server.url}/v1/vector_stores", headers=headers).json()
    assert [s["id"] for s in stores["data"] if s["name"] == name] == [store_id]

    refused = subprocess.run(
        [*command, "--wait", "0"],
        env={**env, "DEMO_API_FILES_API_KEY": "wrong-key"},
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert refused.returncode == 1 and "knowledge setup failed" in refused.stderr
    assert "wrong-key" not in refused.stderr


# --- the advertised examples walk every path --------------------------------------------------


async def example_prompts(client: AsyncOpenAI) -> dict[str, str]:
    lgos = (await client.models.retrieve(MODEL)).model_extra["lgos"]  # type: ignore[index]
    return {e["label"]: e["prompt"] for e in lgos["examples"]}


DEMO_DB_TOOL = {
    "type": "function",
    "name": "demo_db-execute_sql",
    "description": "Run a read-only SQL query on the demo database.",
    "parameters": {
        "type": "object",
        "properties": {"sql": {"type": "string"}},
        "required": ["sql"],
        "additionalProperties": False,
    },
    "strict": True,
}


async def test_each_example_prompt_walks_the_path_it_promises(
    readable: AsyncOpenAI, files: AsyncOpenAI, knowledge: tuple[str, str]
) -> None:
    """As a UI sends them: typed text, Web search offered, the gateway's MCP tool attached; the
    readable answers a person meets say what they read and quote their evidence."""
    client = readable
    prompts = await example_prompts(client)
    tools: list[Any] = [{"type": "web_search"}, DEMO_DB_TOOL]

    chat = await respond(client, prompts["Chat"], tools=tools)
    assert [item.type for item in chat.output] == ["message"]
    assert chat.output_text.startswith(f'{LABEL} You asked: "{prompts["Chat"]}"')
    assert "plain chat: no tools and no sources were used" in chat.output_text
    assert "untrusted evidence" not in chat.output_text  # the instructions are never echoed

    missing = await respond(client, prompts["Ask about a file"])
    assert "No file came with this message: attach one and ask again." in missing.output_text

    uploaded = await files.files.create(
        file=("release-plan.txt", b"Key point: ship on Friday behind FLAG_EXAMPLE_OK."),
        purpose="user_data",
    )
    try:
        read = await respond(client, with_file(prompts["Ask about a file"], uploaded.id))
    finally:
        await files.files.delete(uploaded.id)
    assert [item.type for item in read.output] == ["message"]
    assert (
        f"I read the attached file release-plan.txt ({uploaded.id}): "
        '"Key point: ship on Friday behind FLAG_EXAMPLE_OK."' in read.output_text
    )

    research = await respond(client, prompts["Research the web"], tools=tools)
    assert [item.type for item in research.output] == ["web_search_call", "message"]
    cited = citations(research)
    assert cited and all(url in research.output_text for url in cited)
    assert "From the evidence I was given:\n- [1] " in research.output_text

    pending = await respond(client, prompts["Save a note"], tools=tools)
    assert "staging password rotates every 30 days" in review_payload(pending)["content"]
    saved = await respond(
        client, answer_review(pending, "approve"), previous_response_id=pending.id
    )
    assert "it is indexed, so later research can find it" in saved.output_text

    found = await respond(client, prompts["Find a saved note"], tools=tools)
    assert [item.type for item in found.output] == ["message"]  # knowledge only: no Web call
    assert re.search(
        r'- \[K1\] note-[\w-]+\.md \(file id file-\w+\): "[^"]*staging password rotates every 30 '
        r"days",
        found.output_text,
    ), found.output_text

    asked = await respond(client, prompts["Query the demo database"], tools=tools)
    call = next(item for item in asked.output if item.type == "function_call")
    assert call.name == "demo_db-execute_sql"
    assert json.loads(call.arguments)["sql"].startswith("SELECT name, status FROM projects")
    rows = '[{"name": "legacy-portal", "status": "archived"}]'
    ledger = [
        {"role": "user", "content": prompts["Query the demo database"]},
        *[item.model_dump(exclude_none=True) for item in asked.output],
        {"type": "function_call_output", "call_id": call.call_id, "output": rows},
    ]
    answered = await respond(client, ledger, tools=tools)
    assert f'A tool returned: "{rows}"' in answered.output_text


async def test_both_sources_when_asked_and_the_answer_quotes_each(
    readable: AsyncOpenAI, knowledge: tuple[str, str]
) -> None:
    response = await respond(
        readable,
        "Search the web and my notes for LangGraph durable execution idempotency keys.",
        tools=[{"type": "web_search"}],
    )
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    _, note_id = knowledge
    # Notes saved by earlier tests may rank first: the seeded one is quoted under its own label.
    assert re.search(
        rf"- \[K\d\] {re.escape(SEEDED_NOTE)} \(file id {note_id}\): \"Retry budget",
        response.output_text,
    ), response.output_text
    assert all(url in response.output_text for url in citations(response))
    assert "Cite Web results" not in response.output_text  # no instructions in the answer
