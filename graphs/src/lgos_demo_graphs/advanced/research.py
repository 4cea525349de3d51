"""The ``research`` subgraph: one source-selection pass, then the selected searches, no loop.

Web and knowledge search are chosen together before either returns, so private results never
shape the public query. Both calls run in one ``ToolNode`` (in parallel); their outputs become
the evidence the answer quotes: Web results with their exact URLs, knowledge results as [K#].
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from lgos import status_event

from lgos_demo_graphs.advanced import prompts
from lgos_demo_graphs.advanced.context import AdvancedContext
from lgos_demo_graphs.advanced.knowledge import KnowledgeHit
from lgos_demo_graphs.advanced.services import Services
from lgos_demo_graphs.web_search import web_search

KNOWLEDGE_SEARCH = "knowledge_search"
SOURCE_STATUS = {"web_search": "Searching the web", KNOWLEDGE_SEARCH: "Searching shared knowledge"}


class ResearchState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    request: str
    recent: list[str]
    sources: list[str]
    """The searches the selection pass chose, in call order."""
    findings: list[str]
    """Their outputs as text, for a note drafted from this research."""


def one_line(text: str) -> str:
    """A note on one line: its title heading (if any) as ``Title:``, then its body."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].startswith("#"):
        title = lines[0].lstrip("#").strip()
        lines = [f"{title}:", *lines[1:]] if title else lines[1:]
    return " ".join(" ".join(lines).split())


def render_hits(hits: list[KnowledgeHit]) -> str:
    if not hits:
        return "No knowledge results."
    # One line per hit: a note's own line breaks would split its [K#] line from its text.
    return "\n".join(
        f"[K{i}] {hit.filename} (file id {hit.file_id}): {one_line(hit.text)}"
        for i, hit in enumerate(hits, 1)
    )


def make_knowledge_search(services: Services) -> BaseTool:
    @tool(KNOWLEDGE_SEARCH, response_format="content_and_artifact")
    async def knowledge_search(query: str) -> tuple[str, list[dict[str, Any]]]:
        """Search the team's reviewed knowledge notes (private; cite results as [K#])."""
        knowledge = services.knowledge()
        if knowledge is None:
            return "Shared knowledge is not configured.", []
        hits = await knowledge.search(query, services.settings.knowledge_max_results)
        return render_hits(hits), [asdict(hit) for hit in hits]

    return knowledge_search


def build_research(services: Services) -> Pregel[Any, Any, Any, Any]:
    knowledge_search = make_knowledge_search(services)
    selector = services.private_model

    def offered(context: AdvancedContext) -> list[BaseTool]:
        tools: list[BaseTool] = []
        if context.web_search:
            tools.append(web_search)
        if not context.disabled and services.knowledge() is not None:
            tools.append(knowledge_search)
        return tools

    async def select_sources(
        state: ResearchState, runtime: Runtime[AdvancedContext]
    ) -> dict[str, Any]:
        tools = offered(runtime.context or AdvancedContext())
        if not tools:
            return {"sources": []}
        status_event("Choosing sources")
        bound = selector.bind_tools(tools, tool_choice="required").with_config(
            tags=["nostream"], run_name="select_sources"
        )
        prompt: list[AnyMessage] = [SystemMessage(prompts.SELECT_SOURCES)]
        if state.get("recent"):
            prompt.append(HumanMessage("Earlier conversation:\n" + "\n".join(state["recent"])))
        prompt.append(HumanMessage(state.get("request", "")))
        choice = await bound.ainvoke(prompt)
        calls = [c for c in getattr(choice, "tool_calls", []) if c["name"] in SOURCE_STATUS]
        if not isinstance(choice, AIMessage) or not calls:
            return {"sources": []}
        selection = choice.model_copy(update={"tool_calls": calls})
        return {"messages": [selection], "sources": [c["name"] for c in calls]}

    def after_select(state: ResearchState) -> Literal["tools", "__end__"]:
        return "tools" if state.get("sources") else "__end__"

    searches = ToolNode([web_search, knowledge_search])

    async def run_tools(state: ResearchState) -> dict[str, Any]:
        for source in dict.fromkeys(state.get("sources", [])):
            status_event(SOURCE_STATUS[source])
        result: dict[str, Any] = await searches.ainvoke(state)
        findings = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
        return {**result, "findings": findings}

    builder = StateGraph(ResearchState, context_schema=AdvancedContext)
    builder.add_node("select_sources", select_sources)
    builder.add_node("tools", run_tools)
    builder.add_edge(START, "select_sources")
    builder.add_conditional_edges("select_sources", after_select, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(name="research")


def evidence_messages(messages: list[AnyMessage]) -> list[ToolMessage]:
    """This run's search results (replayed earlier searches are not ToolMessages)."""
    return [m for m in messages if isinstance(m, ToolMessage) and m.name in SOURCE_STATUS]


def has_evidence(messages: list[AnyMessage]) -> bool:
    return any(bool(m.artifact) for m in evidence_messages(messages))
