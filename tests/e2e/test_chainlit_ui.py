"""The Chainlit UI as a person uses it: Debian's Chromium (Playwright, headless) against a private
native stack on free ports — the app talks to the real LiteLLM gateway, LGOS on offline-model,
the Files service, SearXNG and the MCP demo database. Screenshots: .dev/screenshots/chainlit/.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.support import browser
from tests.support.browser import BrowserUI
from tests.support.devstack import DEVSTACK, GATEWAY_KEY, files_service
from tests.support.servers import OFFLINE_MODEL_ECHO
from tests.support.ui_logs import TurnLogs
from tests.support.ui_people import CHAINLIT_PASSWORD, CHAINLIT_USER, ChainlitUser

pytestmark = pytest.mark.socket
SCREENSHOTS = "chainlit"
UI_PORT = "CHAINLIT_PORT"

USER, PASSWORD = CHAINLIT_USER, CHAINLIT_PASSWORD
STARTUP = ("Chainlit UI:", f"login {USER} / {PASSWORD}")
# Echo: these journeys check what reached the model (the showcase module meets readable answers).
STACK_ENV = {
    "CHAINLIT_CATALOG_TTL": "1",
    "DEMO_API_REPORT_STEP_SECONDS": "2",
    **OFFLINE_MODEL_ECHO,
}
PERSON = ChainlitUser


def test_a_wrong_password_is_refused(ui: BrowserUI) -> None:
    with ui.user("wrong_password") as user:
        user.page.goto(user.base_url)
        user.expect_visible("#email")
        user.page.fill("#email", USER)
        user.page.fill("#password", "not-the-password")
        user.page.click("button[type=submit]")
        user.page.wait_for_timeout(1500)
        user.shot("refused")
        assert user.page.locator("#chat-input").count() == 0
        user.expect_visible("#password")


def gateway(stack: dict[str, str]) -> str:
    return f"http://127.0.0.1:{stack['OPENAI_GATEWAY_PORT']}"


def test_login_shows_one_profile_per_graph_with_its_description(person: ChainlitUser) -> None:
    person.page.click("#chat-profiles")
    for graph in ("simple-graph", "status-events", "interruptible-approval", "display-file"):
        person.expect_visible(f'[data-test="select-item:{graph}"]')
    person.page.hover('[data-test="select-item:background-report"]')
    person.expect_text("Writes a multi-step report")
    person.shot("profiles with a description")
    person.expect_no_text("lgos-files-service")  # the gateway's Files entry is not a graph


def test_plain_chat_streams_the_answer(person: ChainlitUser) -> None:
    person.open("simple-graph")
    person.ask("What does a checkpointer do?", 'You said: "What does a checkpointer do?"')
    person.shot("streamed answer")
    assert person.stream_tokens > 5, "the answer arrived whole, not token by token"
    assert person.answers()[-1].startswith("[offline-model: deterministic stand-in")
    person.page.reload()
    person.settle()
    person.expect_text("What does a checkpointer do?")  # the thread list and history persist
    person.shot("after reload")


def test_settings_change_the_answer(person: ChainlitUser) -> None:
    person.open("simple-graph")
    person.ask("Explain retries.", "for a general audience")
    person.choose_setting("audience", "expert")
    person.ask("Explain retries again.", "for a expert audience")
    person.shot("answer for experts")


OUTCOMES = [
    ("refusal", "Do the forbidden thing.", "Refused: I can't help with that request."),
    (
        "incomplete",
        "Tell me a long story about queues.",
        "The answer is incomplete (max_output_tokens).",
    ),
    ("failure", "Fail after a partial answer.", "The graph failed:"),
]


def test_refusal_incomplete_and_failure_are_shown_as_such(person: ChainlitUser) -> None:
    person.open("response-outcomes")
    for outcome, question, shown in OUTCOMES:
        person.choose_setting("outcome", outcome)
        person.ask(question, shown)
        if outcome == "incomplete":
            assert person.answers()[-1].startswith("[offline-model")  # the partial text stays
    person.shot("refusal, incomplete and failed turns")


def test_commentary_is_shown_as_progress_apart_from_the_answer(person: ChainlitUser) -> None:
    person.open("status-events")
    person.send("Summarize the queue design.")
    person.expect_text('You said: "Summarize the queue design."')
    person.wait_idle()
    person.shot("progress and answer")
    lines = ["Reading the question", "Drafting the answer"]
    person.commentary_above_answer(lines)
    person.page.reload()
    person.settle()
    person.expect_text('You said: "Summarize the queue design."')
    person.commentary_above_answer(lines)  # the stored thread keeps the order and the label


@pytest.mark.parametrize(
    ("graph", "question"),
    [
        ("server-tools", "Search the web for langgraph interrupts"),
        # advanced-graph routes it to its research subgraph (commentary, then cited sources).
        ("advanced-graph", "Look up the LangGraph interrupts guidance"),
    ],
    ids=["server-tools", "advanced-graph"],
)
def test_research_cites_a_url_searxng_returned(
    person: ChainlitUser, stack: dict[str, str], graph: str, question: str
) -> None:
    person.open(graph)
    person.send(question)
    person.expect_text("Sources")
    person.wait_idle()
    person.shot("answer with sources")
    person.commentary_above_answer(["Searching the web"])
    urls = browser.searxng_urls(stack, question)
    link = person.page.get_by_role("link", name="LangGraph interrupts: human-in-the-loop guidance")
    href = link.first.get_attribute("href")
    assert href in urls, f"{href} is not among SearXNG's results {urls}"
    browser.follow_source(person, link.first, str(href))


def test_review_approve(person: ChainlitUser) -> None:
    applied = "Decision: approved. Applied: Proposed change: Rename the project to Atlas"
    browser.decide_on_a_change(person, "Rename the project to Atlas", "approve", applied)
    assert person.page.get_by_role("button", name="Reject", exact=True).count() == 0


def test_review_reject(person: ChainlitUser) -> None:
    rejected = "Decision: rejected. Nothing was changed."
    browser.decide_on_a_change(person, "Delete the staging bucket", "reject", rejected)


def test_review_revise_then_approve(person: ChainlitUser) -> None:
    person.open("interruptible-approval")
    person.send("Publish the release notes")
    person.review_shown()
    browser.feedback_then_approve(person)


def pending_review(person: ChainlitUser, request: str) -> None:
    """A review waiting in a persisted thread."""
    person.open("interruptible-approval")
    person.ask(request, "Review requested")
    person.page.wait_for_url(re.compile(r"/thread/"))
    person.shot("pending review")


def test_reload_during_a_pending_review_then_finish_it(person: ChainlitUser) -> None:
    pending_review(person, "Rotate the signing key")
    person.page.reload()
    person.settle()
    # A new socket session: the pending review comes back from the thread's metadata in
    # PostgreSQL, with its buttons re-attached to the review message (once).
    person.expect_text("Approve this change? Proposed change: Rotate the signing key")
    person.expect_visible("button:has-text('Approve')")
    person.shot("pending review after reload")
    assert person.page.get_by_role("button", name="Approve", exact=True).count() == 1
    person.click_button("Approve")
    person.expect_text("Decision: approved. Applied: Proposed change: Rotate the signing key")
    person.wait_idle()
    person.shot("finished after reload")


def test_a_pending_review_survives_a_restart_of_the_app(
    person: ChainlitUser, stack: dict[str, str]
) -> None:
    pending_review(person, "Archive the legacy portal")
    restarted = subprocess.run(
        [*DEVSTACK, "restart", "chainlit"], env=stack, capture_output=True, text=True, timeout=120
    )
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    person.page.reload()
    person.settle()
    person.expect_text("Approve this change? Proposed change: Archive the legacy portal")
    person.shot("pending review after an app restart")
    person.click_button("Reject")
    person.expect_text("Decision: rejected. Nothing was changed.")
    person.wait_idle()
    person.shot("finished after the restart")


def test_an_attached_file_reaches_the_graph_through_the_files_service(
    person: ChainlitUser, stack: dict[str, str], tmp_path: Path
) -> None:
    browser.file_reaches_the_graph(person, stack, tmp_path)


def test_display_file_shows_the_generated_chart(person: ChainlitUser) -> None:
    browser.chart_is_shown(person, "img[src*='/project/file/'], img[src^='blob:']")
    assert "file-" not in person.answers()[-1]  # no ids or URLs in the transcript's answer
    person.page.wait_for_url(re.compile(r"/thread/"))
    person.page.reload()
    person.settle()
    kept = person.expect_image(
        "img[src*='/lgos/elements/']", browser.CHART_WIDTH, "the chart still shown after a reload"
    )
    person.shot("chart after reload")
    # The kept bytes are served only to the thread's author.
    src = kept.get_attribute("src")
    assert src is not None
    assert httpx.get(person.base_url + src, timeout=5.0).status_code == 401


@pytest.mark.parametrize("graph", ["simple-graph", "advanced-graph"])
def test_mcp_question_answered_from_the_demo_database(person: ChainlitUser, graph: str) -> None:
    # Both declare mcp_tools: the app offers the gateway's MCP tools by that feature alone.
    # A read-only query against the gateway's MCP demo database.
    query = "SELECT name FROM projects ORDER BY name -- demo db execute sql"
    browser.mcp_answer(person, graph, query, "demo_db-execute_sql")
    assert "legacy-portal" in person.answers()[-1]


def note_files(stack: dict[str, str]) -> set[str]:
    with files_service(stack) as files:
        listed = files.get("/files", params={"limit": 10000}).json()["data"]
    return {f["id"] for f in listed if f["filename"].startswith("note-")}


def test_advanced_graph_plain_chat_streams(person: ChainlitUser) -> None:
    person.open("advanced-graph")
    person.send("Explain why idempotency matters.")
    person.expect_text('You said: "Explain why idempotency matters."')
    person.wait_idle()
    person.shot("advanced-graph answer")
    assert person.stream_tokens > 5


def test_advanced_graph_quotes_an_attached_file(person: ChainlitUser, tmp_path: Path) -> None:
    person.send_file("advanced-graph", tmp_path / "brief.txt")
    person.expect_text("FILE_INPUT_OK")
    person.wait_idle()
    person.shot("answer quotes the file")
    assert "FILE_INPUT_OK" in person.answers()[-1]


def test_advanced_graph_save_approve_then_a_later_question_finds_the_note(
    person: ChainlitUser, stack: dict[str, str]
) -> None:
    filename, before = browser.save_a_note(person, lambda: note_files(stack))
    person.shot("note saved")
    # The graph's progress while it stored the note (a review's answer runs outside a message).
    person.commentary_above_answer(["Saving the approved note", "Indexing the note"])
    assert len(note_files(stack) - before) == 1
    person.send("Search shared knowledge: what do retries need?")
    person.expect_text("[K1]")
    person.wait_idle()
    person.shot("the note is found")
    assert filename in person.answers()[-1]


def test_advanced_graph_stores_no_rejected_note(
    person: ChainlitUser, stack: dict[str, str]
) -> None:
    browser.rejected_notes_are_never_stored(person, lambda: note_files(stack))


def test_background_report_shows_progress_and_completes(person: ChainlitUser) -> None:
    person.open("background-report")
    person.send("Report on idempotency keys")
    person.expect_text("Background run")
    person.expect_text("Collecting sources")
    person.commentary_running()
    person.shot("progress")
    person.expect_text("Background run completed.", timeout=60)
    person.expect_text('You said: "Report on idempotency keys"')
    person.shot("report")
    person.commentary_above_answer(["Collecting sources", "Writing the report"])


def test_background_report_can_be_cancelled(person: ChainlitUser) -> None:
    person.open("background-report")
    person.send("Report on cancellation")
    person.expect_text("Collecting sources")
    person.click_button("Cancel")
    person.expect_text("Background run cancelled.", timeout=30)
    person.shot("cancelled")
    person.expect_no_text('You said: "Report on cancellation"')


def strip_extension(stack: dict[str, str], model: str) -> None:
    """Remove a graph's lgos extension from the gateway's served config and restart LiteLLM."""
    state = Path(stack["DEVSTACK_STATE_DIR"])
    config_path = state / "litellm.yaml"
    config = yaml.safe_load(config_path.read_text())
    for entry in config["model_list"]:
        if entry["model_name"] == model:
            entry["model_info"].pop("lgos")
    config_path.write_text(yaml.safe_dump(config))
    child = state / "litellm.pid.child"
    before = child.read_text()
    os.kill(int((state / "litellm.pid").read_text()), signal.SIGHUP)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if child.exists() and child.read_text() != before:
            try:
                info = httpx.get(
                    f"{gateway(stack)}/model/info",
                    headers={"Authorization": f"Bearer {GATEWAY_KEY}"},
                    timeout=2.0,
                ).json()
                entry = next(e for e in info["data"] if e["model_name"] == model)
                if "lgos" not in (entry.get("model_info") or {}):
                    return
            except (httpx.HTTPError, ValueError, KeyError, StopIteration):
                pass
        time.sleep(0.5)
    raise AssertionError(f"the gateway still publishes {model}'s extension")


def test_zz_a_stripped_extension_shows_the_limited_functionality_notice(
    person: ChainlitUser, stack: dict[str, str]
) -> None:
    # Last in this module: it changes the shared stack's gateway catalog.
    strip_extension(stack, "lgos/citation-events")
    person.page.wait_for_timeout(1500)  # the app re-reads the catalog after CHAINLIT_CATALOG_TTL
    person.page.goto(person.base_url)
    person.settle()
    person.open("citation-events")
    person.expect_text("Limited functionality")
    person.shot("limited notice")
    person.ask("Hello there", 'You said: "Hello there"')
    person.shot("plain chat still works")


def test_status_lists_chainlit(stack: dict[str, str]) -> None:
    result = subprocess.run(
        [*DEVSTACK, "status"], env=stack, capture_output=True, text=True, timeout=30
    )
    assert re.search(r"chainlit\s+healthy", result.stdout), result.stdout
    health = httpx.get(f"http://127.0.0.1:{stack['CHAINLIT_PORT']}/health", timeout=5.0)
    assert health.status_code == 200 and json.loads(health.text)["status"] == "ok"


def test_a_turn_is_logged_as_json_with_its_request_id_and_without_the_prompt(
    person: ChainlitUser, stack: dict[str, str]
) -> None:
    prompt = "quetzal-prompt-6194"
    logs = TurnLogs(Path(stack["DEVSTACK_STATE_DIR"]), "chainlit.log", ("lgos_chainlit", "lgos_ui"))
    person.open("simple-graph")
    person.ask(f"Log this turn: {prompt}", f'You said: "Log this turn: {prompt}"')
    logs.check(prompt, "lgos/simple-graph", whole_ui_log=True)
