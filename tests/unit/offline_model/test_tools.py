"""offline-model's source choice: natural phrasing picks Web search, knowledge search or both."""

from __future__ import annotations

import pytest
from offline_model.answer import Prompt
from offline_model.structured import classify
from offline_model.tools import ToolSpec, plan_calls

QUERY = {"type": "object", "properties": {"query": {"type": "string"}}}
WEB = ToolSpec("web_search", "function", QUERY)
KNOWLEDGE = ToolSpec("knowledge_search", "function", QUERY)
SOURCES = [WEB, KNOWLEDGE]
BOTH = ["web_search", "knowledge_search"]


def chosen(text: str, tools: list[ToolSpec] = SOURCES, choice: object = "required") -> list[str]:
    return [call.name for call in plan_calls(Prompt(user=[text]), tools, choice)]


@pytest.mark.parametrize(
    ("text", "sources"),
    [
        # knowledge phrasings
        ("Search my notes: how often does the staging password rotate?", ["knowledge_search"]),
        ("What did we save about the staging password?", ["knowledge_search"]),
        ("What have we noted about retries?", ["knowledge_search"]),
        ("Look it up in our notes, please.", ["knowledge_search"]),
        ("Check the shared knowledge for the release checklist.", ["knowledge_search"]),
        ("Find the saved note on idempotency.", ["knowledge_search"]),
        ("Use knowledge search for retries.", ["knowledge_search"]),  # the tool's own name
        # web phrasings
        ("Search the web: how do LangGraph interrupts pause a run?", ["web_search"]),
        ("Look this up online: LiteLLM proxy configuration.", ["web_search"]),
        ("What is the latest LangGraph streaming guidance?", ["web_search"]),
        ("Search the internet for advisory locks.", ["web_search"]),
        # both, in the offered order
        ("Search the web and my notes: how often does the password rotate?", BOTH),
        ("What did we save, and what does the latest guidance online say?", BOTH),
        # neither named: the first offered source, as tool_choice=required demands one call
        ("Find the interrupt guidance.", ["web_search"]),
    ],
)
def test_source_choice_follows_natural_phrasing(text: str, sources: list[str]) -> None:
    assert chosen(text) == sources
    assert chosen(text) == chosen(text)  # deterministic


def test_only_offered_sources_are_chosen() -> None:
    # Web search not enabled for this request: "my notes" still finds knowledge, "web" nothing
    # but the one offered source.
    assert chosen("Search the web and my notes.", [KNOWLEDGE]) == ["knowledge_search"]
    assert chosen("Search the web for retries.", [KNOWLEDGE]) == ["knowledge_search"]


def test_source_phrases_never_pick_tools_that_are_not_searches() -> None:
    note = ToolSpec("save_note", "function", QUERY)
    webhook = ToolSpec("web_hook", "function", QUERY)
    assert chosen("Save this to my notes on the web.", [note, webhook], "auto") == []


def test_no_call_once_a_tool_result_is_the_last_input() -> None:
    prompt = Prompt(user=["Search my notes."], ends_with_tool_output=True)
    assert plan_calls(prompt, SOURCES, "required") == []


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("What did we save about the staging password?", "research"),
        ("Search my notes: how often does it rotate?", "research"),
        ("Which notes did we save last week? Save a summary of them.", "research_and_save"),
        ("Remember this note: the password rotates monthly.", "save"),
    ],
)
def test_recalling_a_save_is_research_not_a_new_save(text: str, intent: str) -> None:
    assert classify(text) == intent


def test_an_mcp_tool_is_named_with_or_without_its_client_prefix() -> None:
    sql = {"type": "object", "properties": {"sql": {"type": "string"}}}
    prompt = "SELECT name FROM projects -- demo db execute sql"
    for name in ("demo_db-execute_sql", "gw_demo_db-execute_sql"):
        assert chosen(prompt, [ToolSpec(name, "function", sql)], "auto") == [name]
    # Never fewer than two words of a name: "sum" alone does not name calculate_sum.
    assert chosen("What is the sum?", [ToolSpec("calculate_sum", "function", sql)], "auto") == []
    assert chosen("gw only", [ToolSpec("gw_demo_db-execute_sql", "function", sql)], "auto") == []
