"""interruptible-approval: ask for approval, act only once approved, name the decision.

Every request pauses with ``{question, choices: ["approve", "reject"], allow_other: true}``.
"approve" performs the side effect (idempotently, keyed by the run) and finishes; "reject"
finishes without it; any other answer is revision feedback: the draft is revised and the
graph loops back to ask again (a new node invocation, so a new interrupt).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.pregel import Pregel
from langgraph.types import interrupt
from lgos import GraphConfig, GraphFeature

APPLIED: dict[str, str] = {}
"""The demo's side effect: applied changes by idempotency key (a real graph writes a store)."""


class ApprovalState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    draft: str
    decision: str
    revisions: int


def _request_text(state: ApprovalState) -> str:
    humans = [m for m in state.get("messages", []) if isinstance(m, HumanMessage)]
    return humans[-1].text if humans else ""


def draft(state: ApprovalState) -> dict[str, Any]:
    return {"draft": f"Proposed change: {_request_text(state)}", "revisions": 0}


def review(state: ApprovalState) -> dict[str, Any]:
    answer = interrupt(
        {
            "question": f"Approve this change? {state['draft']}",
            "choices": ["approve", "reject"],
            "allow_other": True,
        }
    )
    decision = str(answer).strip()
    if decision.lower() in ("approve", "reject"):
        return {"decision": decision.lower()}
    return {
        "decision": "revise",
        "draft": f"{state['draft']} (revised: {decision})",
        "revisions": state.get("revisions", 0) + 1,
    }


def route(state: ApprovalState) -> Literal["review", "apply", "finish"]:
    if state["decision"] == "revise":
        return "review"
    return "apply" if state["decision"] == "approve" else "finish"


def apply(state: ApprovalState) -> dict[str, Any]:
    # After the interrupt, keyed by content: a replayed node does not apply the change twice.
    key = hashlib.sha256(state["draft"].encode()).hexdigest()
    APPLIED.setdefault(key, state["draft"])
    return {}


def finish(state: ApprovalState) -> dict[str, Any]:
    if state["decision"] == "approve":
        text = f"Decision: approved. Applied: {state['draft']}"
    else:
        text = f"Decision: rejected. Nothing was changed. ({state['draft']})"
    if state.get("revisions"):
        text += f" Revisions requested: {state['revisions']}."
    return {"messages": [AIMessage(content=text)]}


def build() -> Pregel[Any, Any, Any, Any]:
    builder = StateGraph(ApprovalState)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_node("apply", apply)
    builder.add_node("finish", finish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_conditional_edges("review", route)
    builder.add_edge("apply", "finish")
    builder.add_edge("finish", END)
    return builder.compile(name="interruptible-approval")


CONFIG = GraphConfig(
    graph=build,
    description="Asks for approval (approve, reject or revise) before acting; names the decision.",
    features=frozenset({GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND}),
)
