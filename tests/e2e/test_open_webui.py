"""Open WebUI as a person uses it: Debian's Chromium (Playwright, headless) against a private
native stack on free ports. Open WebUI 0.12.4 runs the LGOS pipe, which talks to the real LiteLLM
gateway, LGOS on offline-model, the Files service, SearXNG and the MCP demo database (through
Open WebUI's own MCP tool-server connection). Screenshots: .dev/screenshots/open-webui/.

One Open WebUI start and one login through the form for the module (≈ 40 s, more on a busy
machine); every journey is a fresh browser context on that session (tests/e2e/conftest.py).
What the Files service and the knowledge vector store hold is checked through the SDK.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from lgos_stack.keys import FILES_DEV_KEY
from openai import AsyncOpenAI

from tests.support import browser
from tests.support.advanced import note_files, store_file_ids
from tests.support.clients import sdk_client
from tests.support.devstack import DEVSTACK, GATEWAY_KEY
from tests.support.servers import OFFLINE_MODEL_ECHO, ROOT
from tests.support.ui_logs import TurnLogs
from tests.support.ui_people import WEBUI_EMAIL, WEBUI_PASSWORD, WebUIUser

pytestmark = pytest.mark.socket
SCREENSHOTS = "open-webui"
UI_PORT = "OPEN_WEBUI_PORT"

EMAIL, PASSWORD = WEBUI_EMAIL, WEBUI_PASSWORD
STARTUP = (f"login {EMAIL} / {PASSWORD}",)
STACK_ENV = {
    # No LGOS_MCP_GRAPHS: simple-graph and advanced-graph declare mcp_tools themselves.
    "DEVSTACK_SKIP": "chainlit",
    "DEMO_API_REPORT_STEP_SECONDS": "2",
    # Paced tokens, so a person (and this test) can see the answer grow.
    "OFFLINE_MODEL_TOKEN_DELAY": "0.08",
    # Echo: these journeys check what reached the model (the showcase module meets readable
    # answers).
    **OFFLINE_MODEL_ECHO,
}
T = TypeVar("T")
GRAPHS = ("simple-graph", "status-events", "server-tools", "interruptible-approval")


PERSON = WebUIUser


def in_thread(work: Coroutine[Any, Any, T]) -> T:
    """Run SDK calls beside Playwright's own event loop (sync Playwright holds this thread's)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


def test_login_lists_the_graphs_with_their_descriptions(person: WebUIUser) -> None:
    person.shot("logged in")
    person.page.get_by_role("button", name=re.compile("^Selected model")).first.click()
    for graph in (*GRAPHS, "background-report", "display-file"):
        person.expect_text(graph)
    person.expect_no_text("lgos-files-service")  # the gateway's Files entry is not a graph
    person.shot("graphs in the model selector")
    person.page.keyboard.press("Escape")
    person.open("background-report")
    person.expect_text("Writes a multi-step report; run it with background=true and poll.")
    person.shot("a graph with its description")


@pytest.mark.parametrize("graph", ["simple-graph", "advanced-graph"])
def test_plain_chat_streams_the_answer(person: WebUIUser, graph: str) -> None:
    person.open(graph)
    person.watch_growth()
    person.send("What does a checkpointer do?")
    person.expect_text("[offline-model")
    person.shot("answer streaming")
    person.expect_text('You said: "What does a checkpointer do?"')
    person.wait_idle()
    person.shot("streamed answer")
    sizes = person.growth()
    # A whole answer lands in one or two steps; on a loaded machine Open WebUI batches a few
    # chunks per render (8 steps seen once, >8 usually), so five steps still prove streaming.
    assert len(sizes) >= 5 and sizes == sorted(sizes), f"no token-by-token growth: {sizes}"
    assert "[offline-model: deterministic stand-in, not a real model]" in person.messages()
    person.page.reload()
    person.expect_text('You said: "What does a checkpointer do?"')  # Open WebUI kept the chat
    person.shot("after reload")


def test_a_setting_changes_the_answer(person: WebUIUser) -> None:
    person.open("simple-graph")
    person.send("Explain retries.")
    person.expect_text("for a general audience")
    person.wait_idle()
    person.page.get_by_role("button", name="Chat Variables").click()
    person.expect_text("Audience")
    person.page.locator("[role=dialog] select").select_option("expert")
    person.shot("settings as chat variables")
    person.page.get_by_role("button", name="Save").click()
    person.send("Explain retries again.")
    person.expect_text("for a expert audience")
    person.wait_idle()
    person.shot("answer for experts")
    # Settings travel as metadata, never as prompt text (the stand-in model echoes prompts).
    person.expect_no_text("chat.variables")
    person.expect_no_text("Audience:")


def test_status_lines_show_the_graphs_progress(person: WebUIUser) -> None:
    person.open("status-events")
    person.send("Summarize the queue design.")
    person.expect_text("Drafting the answer")
    person.wait_idle()
    person.page.get_by_role("button", name="Toggle status history").first.click()
    person.expect_text("Reading the question")
    person.shot("status history")
    answer = person.messages()
    assert answer.index("Reading the question") < answer.index('You said: "Summarize')


@pytest.mark.parametrize(
    ("graph", "question", "lines"),
    [
        (
            "server-tools",
            "Search the web for langgraph interrupts",
            ["Web search: searched the web for"],
        ),
        # advanced-graph routes it to its research subgraph: commentary, then cited sources.
        (
            "advanced-graph",
            "Look up the LangGraph interrupts guidance",
            ["Choosing sources", "Searching the web"],
        ),
    ],
    ids=["server-tools", "advanced-graph"],
)
def test_research_shows_status_lines_and_a_clickable_source(
    person: WebUIUser, stack: dict[str, str], graph: str, question: str, lines: list[str]
) -> None:
    person.open(graph)
    person.send(question)
    person.expect_text("Sources")
    person.wait_idle()
    person.status_history(lines)
    person.shot("answer with status lines and sources")
    urls = browser.searxng_urls(stack, question)
    person.page.get_by_text(re.compile(r"^\d+ Sources?$")).first.click()
    person.shot("sources opened")
    links = [
        href
        for href in person.page.locator("a[href^='http']").evaluate_all(
            "links => links.map(a => a.href)"
        )
        if href in urls
    ]
    if not links:
        person.fail(f"a link to one of SearXNG's results {sorted(urls)}")
    href = links[0]
    browser.follow_source(person, person.page.locator(f"a[href='{href}']").first, href)


def test_review_approve_on_the_card(person: WebUIUser) -> None:
    applied = "Decision: approved. Applied: Proposed change: Rename the project to Atlas"
    browser.decide_on_a_change(person, "Rename the project to Atlas", "approve", applied)


def test_review_reject_on_the_card(person: WebUIUser) -> None:
    rejected = "Decision: rejected. Nothing was changed."
    browser.decide_on_a_change(person, "Delete the staging bucket", "reject", rejected)
    person.expect_no_text("Applied:")


def test_reload_during_a_pending_review_then_answer_it(person: WebUIUser) -> None:
    person.open("interruptible-approval")
    person.send("Rotate the signing key")
    person.expect_visible("text=Go ahead as drafted.")
    person.page.wait_for_url(re.compile(r"/c/"))
    person.shot("pending review")
    person.page.reload()
    # Open WebUI saved the card with the chat: it is still there, still answerable.
    person.expect_text("Approve this change? Proposed change: Rotate the signing key")
    person.expect_visible("text=Go ahead as drafted.")
    person.shot("pending review after reload")
    person.card_option("approve")
    person.expect_text("Decision: approved. Applied: Proposed change: Rotate the signing key")
    person.wait_idle()
    person.shot("finished after reload")


def test_a_dismissed_review_is_answered_in_the_next_message(person: WebUIUser) -> None:
    person.open("interruptible-approval")
    person.send("Publish the release notes")
    person.expect_visible("text=Go ahead as drafted.")
    person.page.reload()
    person.expect_visible("text=Go ahead as drafted.")
    person.page.get_by_role("button", name="Cancel", exact=True).last.click()
    person.expect_text("The review is still open")
    person.wait_idle()
    person.shot("card dismissed")
    browser.feedback_then_approve(person)


def test_an_attached_file_reaches_the_graph_through_the_files_service(
    person: WebUIUser, stack: dict[str, str], tmp_path: Path
) -> None:
    browser.file_reaches_the_graph(person, stack, tmp_path)


@pytest.mark.parametrize("graph", ["simple-graph", "advanced-graph"])
def test_mcp_question_answered_from_the_demo_database(person: WebUIUser, graph: str) -> None:
    # Both declare mcp_tools: the setup job connects the gateway's MCP server to their models.
    # A read-only query through Open WebUI's MCP connection to the gateway.
    query = "SELECT name FROM projects ORDER BY name /* gw demo db execute sql */"
    browser.mcp_answer(person, graph, query, "gw_demo_db-execute_sql")


def files_sdk(stack: dict[str, str]) -> AsyncOpenAI:
    return sdk_client(f"http://127.0.0.1:{stack['FILES_PORT']}/v1", api_key=FILES_DEV_KEY)


def stored_notes(stack: dict[str, str]) -> set[str]:
    """Every note file in the Files service and the knowledge store, listed through the SDK."""
    store = (Path(stack["DEVSTACK_STATE_DIR"]) / "knowledge-vector-store-id").read_text().strip()

    async def listing() -> set[str]:
        async with files_sdk(stack) as files:
            notes = {f"file:{f.filename}" for f in await note_files(files)}
            indexed = {f"store:{i}" for i in await store_file_ids(files, store)}
        return notes | indexed

    return in_thread(listing())


def chat_ledger(stack: dict[str, str], chat_id: str) -> str:
    """What the pipe sent the graph for a chat (its per-chat state in Open WebUI's DATA_DIR)."""
    state = Path(stack["DEVSTACK_STATE_DIR"]) / "open-webui" / "lgos-chats" / f"{chat_id}.json"
    return state.read_text()


def test_advanced_graph_quotes_an_attached_file_read_through_the_files_service(
    person: WebUIUser, stack: dict[str, str], tmp_path: Path
) -> None:
    person.send_file("advanced-graph", tmp_path / "advanced-brief.txt")
    person.expect_text("FILE_INPUT_OK", timeout=60)
    person.wait_idle()
    person.shot("answer quotes the file")
    ledger = json.loads(chat_ledger(stack, person.chat_id()))
    sent = ledger["exchanges"][-1]["items"][0]
    file_ids = [p["file_id"] for p in sent["content"] if p.get("type") == "input_file"]
    # The marker reached the graph only inside the file: Open WebUI injected no extracted text
    # (its own RAG) into the message the graph got.
    assert len(file_ids) == 1 and "FILE_INPUT_OK" not in json.dumps(sent), sent

    async def stored() -> tuple[Any, bytes]:
        async with files_sdk(stack) as files:
            meta = await files.files.retrieve(file_ids[0])
            content = await files.files.content(file_ids[0])
            return meta, content.read()

    meta, content = in_thread(stored())
    assert meta.filename == "advanced-brief.txt" and meta.purpose == "user_data"
    assert content == b"The project marker is FILE_INPUT_OK."


def test_advanced_graph_save_approve_then_a_later_chat_finds_the_note(
    person: WebUIUser, stack: dict[str, str]
) -> None:
    filename, before = browser.save_a_note(person, lambda: stored_notes(stack))
    person.status_history(["Saving the approved note", "Indexing the note"])
    person.shot("note saved")
    added = stored_notes(stack) - before
    assert f"file:{filename}" in added and any(a.startswith("store:") for a in added), added
    # A new chat: the note comes back from shared knowledge, cited by label and filename.
    person.open("advanced-graph")
    person.send("Search shared knowledge: what do retries need?")
    person.expect_text(f"[K1] {filename}", timeout=60)
    person.wait_idle()
    person.status_history(["Searching shared knowledge"])
    person.shot("a later chat finds the note")


def test_advanced_graph_stores_no_rejected_note(person: WebUIUser, stack: dict[str, str]) -> None:
    browser.rejected_notes_are_never_stored(person, lambda: stored_notes(stack))


def test_display_file_shows_the_chart_downloaded_through_the_gateway(
    person: WebUIUser,
) -> None:
    browser.chart_is_shown(person, "#messages-container img[alt='word-lengths.png']")
    assert "file-" not in person.messages()  # no ids or URLs in the transcript
    person.page.reload()
    person.expect_visible("#messages-container img[alt='word-lengths.png']")
    person.shot("chart after reload")


def test_background_report_shows_progress_and_completes(person: WebUIUser) -> None:
    person.open("background-report")
    person.send("Report on the queue")
    person.expect_text("Writing the report")
    person.shot("progress while polling")
    person.wait_idle(timeout=120)
    person.expect_text("Background run completed")
    person.shot("report completed")


def test_setup_job_is_idempotent_and_status_lists_open_webui(stack: dict[str, str]) -> None:
    installer = ROOT / "ui" / "open-webui" / "install_pipe.py"
    env = {
        **stack,
        "WEBUI_ADMIN_EMAIL": EMAIL,
        "WEBUI_ADMIN_PASSWORD": PASSWORD,
        "OPENAI_GATEWAY_API_KEY": GATEWAY_KEY,
    }
    again = subprocess.run(
        [
            sys.executable,
            str(installer),
            "--url",
            f"http://127.0.0.1:{stack['OPEN_WEBUI_PORT']}",
            "--gateway-url",
            f"http://127.0.0.1:{stack['OPENAI_GATEWAY_PORT']}/v1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    # Its report is service_kit's JSON lines, without the gateway key or the admin password.
    installed, synced = (json.loads(line) for line in again.stderr.splitlines())
    assert (installed["logger"], installed["event"]) == ("lgos_open_webui_setup", "pipe installed")
    assert installed["changed"] == []
    assert synced["event"] == "model entries synced" and synced["models"]["created"] == []
    assert GATEWAY_KEY not in again.stderr and PASSWORD not in again.stderr
    status = subprocess.run(
        [*DEVSTACK, "status"], env=stack, capture_output=True, text=True, timeout=30
    )
    assert re.search(r"open-webui\s+healthy", status.stdout), status.stdout
    # The key stays server-side: the pipe's valves are not readable by the browser's API.
    with httpx.Client(base_url=f"http://127.0.0.1:{stack['OPEN_WEBUI_PORT']}") as client:
        token = client.post(
            "/api/v1/auths/signin", json={"email": EMAIL, "password": PASSWORD}
        ).json()["token"]
        models = client.get("/api/models", headers={"Authorization": f"Bearer {token}"})
    assert GATEWAY_KEY not in models.text
    assert json.loads(models.text)["data"]


def test_the_pipes_turn_is_logged_as_json_with_its_request_id_and_without_the_prompt(
    person: WebUIUser, stack: dict[str, str]
) -> None:
    prompt = "ocelot-prompt-2417"
    logs = TurnLogs(Path(stack["DEVSTACK_STATE_DIR"]), "open-webui.log", ("lgos_pipe", "lgos_ui"))
    person.open("simple-graph")
    person.ask(f"Log this turn: {prompt}", f'You said: "Log this turn: {prompt}"')
    # Open WebUI's own lines are its own (not checked): only the pipe's are ours.
    ours = logs.check(prompt, "lgos/simple-graph", whole_ui_log=False)
    assert [r["event"] for r in ours if r["logger"] == "lgos_pipe"] == ["turn"]
