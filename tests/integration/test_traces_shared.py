"""A review paused on one ``lgos serve`` process and resumed on another: each request is one
trace continuing its caller's ``traceparent``, exported over OTLP by the process that served it
(configured by the standard ``OTEL_*`` variables only), with the parent links right; each answer
is a resume span in the answering request's trace, linked (as is the resumed run span) to the run
span the run paused in, in the pausing request's trace. Message content is on no span unless
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import psycopg
import pytest
import redis
from lgos.interrupts.ids import run_id_of
from openai import AsyncOpenAI

from tests.support.advanced import advanced_lgos, create_knowledge, seed_note
from tests.support.clients import sdk_client, sdk_pair_fixture
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import files_client, files_service
from tests.support.graphs import SCRIPTED_TEXT
from tests.support.interrupts import answer
from tests.support.lgos_processes import api_process, worker_process
from tests.support.otlp_receiver import OTLPReceiver, ReceivedLink, ReceivedSpan
from tests.support.servers import Server
from tests.support.shared_state import REDIS_URL, shared_env

SERVER_KIND = 2  # OTLP's SPAN_KIND_SERVER
CLIENT_KIND = 3
ROOT = "POST /v1/responses"
RESUME = "lgos.resume interruptible-approval"
RUN = "invoke_workflow interruptible-approval"


@pytest.fixture(scope="module")
def env(
    postgres_uri: str,
    offline_model: Server,
    otlp_receiver: OTLPReceiver,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    return {
        **shared_env(postgres_uri, offline_model, tmp_path_factory.mktemp("traces-shared"), 5.0),
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }


@pytest.fixture(scope="module")
def two_servers(env: dict[str, str]) -> Iterator[tuple[Server, Server]]:
    tmp = Path(env["LGOS_STATE_DIR"])
    with (
        api_process({**env, "OTEL_SERVICE_NAME": "lgos-a"}, tmp / "a.log") as a,
        api_process({**env, "OTEL_SERVICE_NAME": "lgos-b"}, tmp / "b.log") as b,
    ):
        yield a, b


clients = sdk_pair_fixture("two_servers")


def traceparent(trace_id: str, span_id: str) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{span_id}-01"}


def one_request(spans: list[ReceivedSpan], service: str, caller_span: str) -> ReceivedSpan:
    """The run span of one request: under the one server span, itself under the caller."""
    assert {s.service for s in spans} == {service}
    [server] = [s for s in spans if s.kind == SERVER_KIND]
    assert server.parent_id == caller_span
    assert server.name == ROOT
    assert server.attributes["http.response.status_code"] == 200
    [run] = [s for s in spans if s.name == RUN]
    assert run.parent_id == server.span_id
    assert run.attributes["gen_ai.conversation.id"] == "review-7"
    return run


async def test_pause_and_resume_on_two_processes_are_two_linked_traces(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], otlp_receiver: OTLPReceiver
) -> None:
    a, b = clients
    first, second = "a1" * 16, "b2" * 16
    metadata = {"conversation_id": "review-7"}
    paused = await a.responses.create(
        model="interruptible-approval",
        input="Ship it",
        metadata=metadata,
        extra_headers=traceparent(first, "1" * 16),
    )
    done = await b.responses.create(
        model="interruptible-approval",
        previous_response_id=paused.id,
        input=[answer(paused.output[0], "approve")],
        metadata=metadata,
        extra_headers=traceparent(second, "2" * 16),
    )
    assert done.status == "completed"
    pause = one_request(otlp_receiver.trace(first, root=ROOT), "lgos-a", "1" * 16)
    assert "gen_ai.run.paused" in pause.events
    assert pause.attributes["lgos.run.outcome"] == "paused"
    resume = one_request(otlp_receiver.trace(second, root=ROOT), "lgos-b", "2" * 16)
    assert resume.attributes["lgos.run.outcome"] == "completed"
    assert "gen_ai.run.paused" not in resume.events
    answered = resume_span(otlp_receiver.trace(second, root=ROOT), 200)
    assert answered.attributes["lgos.run.id"] == str(run_id_of(paused.id))
    # Both link to the run span the run paused in, on the other process, in the other trace.
    paused_in = ReceivedLink(first, pause.span_id, {"lgos.link.type": "paused_run"})
    assert answered.links == resume.links == (paused_in,)
    assert not pause.links


async def test_a_run_paused_before_links_were_stored_still_resumes_without_one(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], otlp_receiver: OTLPReceiver, env: dict[str, str]
) -> None:
    a, b = clients
    paused = await a.responses.create(
        model="interruptible-approval",
        input="Ship it",
        extra_headers=traceparent("ab" * 16, "a" * 16),
    )
    # As a run paused by an earlier version stored it: no span context in its checkpoint.
    with psycopg.connect(env["LGOS_POSTGRES_URI"], autocommit=True) as db:
        stripped = db.execute(
            "UPDATE checkpoints SET metadata = metadata - 'lgos_paused_in'"
            " WHERE metadata->>'lgos_paused_in' LIKE %s",
            (f"00-{'ab' * 16}-%",),
        ).rowcount
    assert stripped == 1
    done = await b.responses.create(
        model="interruptible-approval",
        previous_response_id=paused.id,
        input=[answer(paused.output[0], "approve")],
        extra_headers=traceparent("ac" * 16, "c" * 16),
    )
    assert done.status == "completed"
    spans = otlp_receiver.trace("ac" * 16, root=ROOT)
    answered = resume_span(spans, 200)
    [run] = [s for s in spans if s.name == "invoke_workflow interruptible-approval"]
    assert answered.links == run.links == ()


def resume_span(spans: list[ReceivedSpan], status: int) -> ReceivedSpan:
    """The resume span of one answering request: a child of its server span."""
    [server] = [s for s in spans if s.kind == SERVER_KIND]
    assert server.attributes["http.response.status_code"] == status
    [resume] = [s for s in spans if s.name == RESUME]
    assert resume.parent_id == server.span_id
    assert resume.trace_id == server.trace_id
    return resume


async def test_each_answer_is_a_resume_span_in_the_answering_trace(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], otlp_receiver: OTLPReceiver
) -> None:
    a, b = clients
    revision = "Make it smaller, zebra-lantern-42"
    paused = await a.responses.create(
        model="interruptible-approval",
        input="Ship it",
        extra_headers=traceparent("c3" * 16, "3" * 16),
    )
    run_id = str(run_id_of(paused.id))
    # Free text (a revision) on the other process: asked again in the same run.
    again = await b.responses.create(
        model="interruptible-approval",
        previous_response_id=paused.id,
        input=[answer(paused.output[0], revision)],
        extra_headers=traceparent("d4" * 16, "4" * 16),
    )
    assert again.output[0].name == "lgos_interrupt"
    revised = resume_span(otlp_receiver.trace("d4" * 16, root=ROOT), 200)
    assert revised.service == "lgos-b"
    assert revised.attributes["lgos.run.id"] == run_id
    assert revised.attributes["gen_ai.agent.name"] == "interruptible-approval"
    assert revised.attributes["lgos.interrupt.answer.kinds"] == ["text"]
    assert "lgos.interrupt.answer.choices" not in revised.attributes
    [first_pause] = [s for s in otlp_receiver.trace("c3" * 16, root=ROOT) if s.name == RUN]
    assert [(link.trace_id, link.span_id) for link in revised.links] == [
        ("c3" * 16, first_pause.span_id)
    ]
    # The stale answer again: refused, and the resume span says why.
    with pytest.raises(openai.ConflictError):
        await a.responses.create(
            model="interruptible-approval",
            previous_response_id=paused.id,
            input=[answer(paused.output[0], "approve")],
            extra_headers=traceparent("e5" * 16, "5" * 16),
        )
    refusal = otlp_receiver.trace("e5" * 16, root=ROOT)
    refused = resume_span(refusal, 409)
    assert refused.attributes["error.type"] == "interrupt_state_conflict"
    assert not refused.links  # refused before the paused run was read
    assert not [s for s in refusal if s.name.startswith("invoke_workflow")]
    # One of the offered choices, back on the first process.
    done = await a.responses.create(
        model="interruptible-approval",
        previous_response_id=again.id,
        input=[answer(again.output[0], "approve")],
        extra_headers=traceparent("f6" * 16, "6" * 16),
    )
    assert done.status == "completed"
    approved = resume_span(otlp_receiver.trace("f6" * 16, root=ROOT), 200)
    assert approved.service == "lgos-a"
    assert approved.attributes["lgos.run.id"] == run_id
    assert approved.attributes["lgos.interrupt.answer.kinds"] == ["choice"]
    assert approved.attributes["lgos.interrupt.answer.choices"] == ["approve"]
    assert "error.type" not in approved.attributes
    # Asked again by the revision's request: the approval links to that request's run span.
    [second_pause] = [s for s in otlp_receiver.trace("d4" * 16, root=ROOT) if s.name == RUN]
    assert [(link.trace_id, link.span_id) for link in approved.links] == [
        ("d4" * 16, second_pause.span_id)
    ]
    # The pausing request has no resume span; the answer's text is on no span.
    assert not [s for s in otlp_receiver.trace("c3" * 16, root=ROOT) if s.name == RESUME]
    assert not [s for s in otlp_receiver.spans if revision in repr(s.attributes)]


def chat_span(spans: list[ReceivedSpan]) -> ReceivedSpan:
    [chat] = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert chat.name.startswith("chat")
    return chat


async def test_message_content_is_on_no_span_by_default(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], otlp_receiver: OTLPReceiver
) -> None:
    a, _ = clients
    prompt, instructions = "Tell me about quartz-otter-913", "Be brief, plover-rule-5"
    reply = await a.responses.create(
        model="scripted",
        instructions=instructions,
        input=prompt,
        extra_headers=traceparent("a7" * 16, "7" * 16),
    )
    assert reply.output_text == SCRIPTED_TEXT
    chat = chat_span(otlp_receiver.trace("a7" * 16, root=ROOT))
    assert "gen_ai.input.messages" not in chat.attributes
    assert "gen_ai.output.messages" not in chat.attributes
    exported = repr(otlp_receiver.spans)
    assert "quartz-otter" not in exported
    assert "plover-rule" not in exported
    assert SCRIPTED_TEXT not in exported


async def test_opting_in_puts_the_messages_on_the_chat_span(
    env: dict[str, str], otlp_receiver: OTLPReceiver
) -> None:
    opted_in = {
        **env,
        "OTEL_SERVICE_NAME": "lgos-content",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    tmp = Path(env["LGOS_STATE_DIR"])
    with api_process(opted_in, tmp / "content.log") as server:
        async with sdk_client(f"{server.url}/v1") as sdk:
            reply = await sdk.responses.create(
                model="scripted",
                instructions="Be brief, heron-rule-6",
                input="Tell me about basalt-heron-27",
                extra_headers=traceparent("b8" * 16, "8" * 16),
            )
    assert reply.output_text == SCRIPTED_TEXT
    chat = chat_span(otlp_receiver.trace("b8" * 16, root=ROOT))
    sent = json.loads(chat.attributes["gen_ai.input.messages"])
    assert {
        "role": "system",
        "parts": [{"type": "text", "content": "Be brief, heron-rule-6"}],
    } in sent
    assert sent[-1] == {
        "role": "user",
        "parts": [{"type": "text", "content": "Tell me about basalt-heron-27"}],
    }
    assert json.loads(chat.attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": SCRIPTED_TEXT}],
            "finish_reason": "stop",
        }
    ]
    # Content goes on the chat span only.
    others = [s for s in otlp_receiver.trace("b8" * 16, root=ROOT) if s is not chat]
    assert others and "basalt-heron" not in repr(others)


async def test_a_background_run_in_the_worker_joins_the_submitters_trace(
    env: dict[str, str], otlp_receiver: OTLPReceiver
) -> None:
    queue = f"lgos-test-traces:{uuid.uuid4().hex[:8]}"
    distributed = {
        **env,
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": queue,
        "DEMO_API_REPORT_STEP_SECONDS": "0.05",
    }
    tmp = Path(env["LGOS_STATE_DIR"])
    caller = "c9" * 16
    try:
        with (
            api_process({**distributed, "OTEL_SERVICE_NAME": "lgos-api"}, tmp / "api.log") as api,
            worker_process({**distributed, "OTEL_SERVICE_NAME": "lgos-worker"}, tmp / "worker.log"),
        ):
            async with sdk_client(f"{api.url}/v1") as sdk:
                queued = await sdk.responses.create(
                    model="background-report",
                    input="report",
                    background=True,
                    extra_headers=traceparent(caller, "9" * 16),
                )
                while queued.status in ("queued", "in_progress"):
                    await asyncio.sleep(0.1)
                    queued = await sdk.responses.retrieve(queued.id)
            assert queued.status == "completed"
            spans = otlp_receiver.trace(caller, root="invoke_workflow background-report")
    finally:
        redis.Redis.from_url(REDIS_URL).delete(queue)
    [submit] = [s for s in spans if s.kind == SERVER_KIND]
    assert (submit.service, submit.name, submit.parent_id) == ("lgos-api", ROOT, "9" * 16)
    assert submit.events == ("lgos.background.queued",)
    # Run by the worker process, under the request that submitted it.
    [run] = [s for s in spans if s.name == "invoke_workflow background-report"]
    assert (run.service, run.parent_id) == ("lgos-worker", submit.span_id)
    assert run.attributes["lgos.run.outcome"] == "completed"
    chat = chat_span(spans)
    assert (chat.service, chat.parent_id) == ("lgos-worker", run.span_id)
    assert chat.attributes["gen_ai.request.model"]


async def test_a_knowledge_search_is_a_retrieval_span_over_the_files_services_spans(
    env: dict[str, str], otlp_receiver: OTLPReceiver
) -> None:
    tmp = Path(env["LGOS_STATE_DIR"])
    otlp = {k: v for k, v in env.items() if k.startswith("OTEL_")}
    (tmp / "files").mkdir()
    with files_service(tmp / "files", FILES_KEY, **otlp) as files:
        async with files_client(f"{files.server.url}/v1") as sdk:
            store_id = await create_knowledge(sdk, "traced-knowledge")
            note = await seed_note(sdk, store_id, "canaries.md", "Canaries go out first.")
        graph_env = {
            **env,
            "OTEL_SERVICE_NAME": "lgos-knowledge",
            "DEMO_API_FILES_BASE_URL": f"{files.server.url}/v1",
            "DEMO_API_FILES_API_KEY": FILES_KEY,
            "DEMO_API_VECTOR_STORE_ID": store_id,
        }
        with advanced_lgos(tmp, graph_env, name="knowledge") as server:
            async with sdk_client(f"{server.url}/v1") as lgos:
                found = await lgos.responses.create(
                    model="advanced-graph",
                    input="Search my knowledge for canaries.",
                    extra_headers=traceparent("da" * 16, "a" * 16),
                )
                attachment: Any = [
                    {"type": "input_text", "text": "What does this note say?"},
                    {"type": "input_file", "file_id": note},
                ]
                read = await lgos.responses.create(
                    model="advanced-graph",
                    input=[{"role": "user", "content": attachment}],
                    extra_headers=traceparent("db" * 16, "b" * 16),
                )
        assert f"(file id {note})" in found.output_text
        assert read.status == "completed"
        retrieval_name = f"retrieval {store_id}"
        spans = otlp_receiver.trace("da" * 16, root=retrieval_name)
        search = "POST /v1/vector_stores/{vector_store_id}/search"
        deadline = asyncio.get_running_loop().time() + 10
        while not [s for s in spans if s.name == search]:  # the Files service exports apart
            assert asyncio.get_running_loop().time() < deadline, sorted(s.name for s in spans)
            await asyncio.sleep(0.1)
            spans = otlp_receiver.trace("da" * 16, root=retrieval_name)
    [retrieval] = [s for s in spans if s.name == retrieval_name]
    assert (retrieval.service, retrieval.kind) == ("lgos-knowledge", CLIENT_KIND)
    assert retrieval.attributes["gen_ai.operation.name"] == "retrieval"
    assert retrieval.attributes["gen_ai.data_source.id"] == store_id
    assert retrieval.attributes["gen_ai.request.top_k"] > 0
    assert retrieval.attributes["lgos.retrieval.documents.count"] >= 1
    assert f":{retrieval.attributes['server.port']}" in files.server.url
    # The query and the documents found are opt-in content.
    assert "gen_ai.retrieval.query.text" not in retrieval.attributes
    assert "gen_ai.retrieval.documents" not in retrieval.attributes
    [served] = [s for s in spans if s.name == search]
    assert (served.service, served.parent_id) == ("files", retrieval.span_id)
    # An attachment is read under a files.read span, the Files service's spans under it.
    reading = otlp_receiver.trace("db" * 16, root="files.read")
    [files_read] = [s for s in reading if s.name == "files.read"]
    assert (files_read.kind, files_read.attributes["lgos.file.id"]) == (CLIENT_KIND, note)
    while len([s for s in reading if s.parent_id == files_read.span_id]) < 2:
        assert asyncio.get_running_loop().time() < deadline + 10, sorted(s.name for s in reading)
        await asyncio.sleep(0.1)
        reading = otlp_receiver.trace("db" * 16, root="files.read")
    assert sorted(s.name for s in reading if s.parent_id == files_read.span_id) == [
        "GET /v1/files/{file_id}",
        "GET /v1/files/{file_id}/content",
    ]
    # In the request's trace, under the tool that searched, under the run span.
    spans = otlp_receiver.trace("da" * 16, root=ROOT)  # the server span ends last
    [lgos_server] = [s for s in spans if s.kind == SERVER_KIND and s.service == "lgos-knowledge"]
    assert lgos_server.parent_id == "a" * 16
    [run] = [s for s in spans if s.name == "invoke_workflow advanced-graph"]
    assert run.parent_id == lgos_server.span_id
    [tool] = [s for s in spans if s.name == "execute_tool knowledge_search"]
    assert (tool.parent_id, retrieval.parent_id) == (run.span_id, tool.span_id)
    # An attachment is read by graph code outside any tool: under that request's run span.
    reading = otlp_receiver.trace("db" * 16, root=ROOT)
    [reading_run] = [s for s in reading if s.name == "invoke_workflow advanced-graph"]
    assert files_read.parent_id == reading_run.span_id
