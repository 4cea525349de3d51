"""The client-function round trip: the graph asks for calculate_sum, we run it, it answers.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/client_function.py
"""

from __future__ import annotations

import json
from typing import Any

from connect import lgos_client
from openai import OpenAI

CALCULATE_SUM: Any = {  # the spec's client function
    "type": "function",
    "name": "calculate_sum",
    "description": "Add a list of integers.",
    "parameters": {
        "type": "object",
        "properties": {"numbers": {"type": "array", "items": {"type": "integer"}}},
        "required": ["numbers"],
        "additionalProperties": False,
    },
    "strict": True,
}


def round_trip(client: OpenAI, model: str, ledger: list[Any]) -> tuple[Any, Any]:
    """Offer calculate_sum and require it; run the call the graph made and send back its
    output. Returns the call and the completed response."""
    called = client.responses.create(
        model=model,
        input=ledger,
        tools=[CALCULATE_SUM],
        store=False,
        tool_choice={"type": "function", "name": "calculate_sum"},
    )
    call = next(item for item in called.output if item.type == "function_call")
    arguments = json.loads(call.arguments)
    ledger.extend(called.output)  # replay every output item unchanged
    ledger.append(
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": json.dumps({"total": sum(arguments["numbers"])}),
        }
    )
    completed = client.responses.create(
        model=model, input=ledger, tools=[CALCULATE_SUM], store=False
    )
    return call, completed


if __name__ == "__main__":
    ledger: list[Any] = [{"role": "user", "content": "Add 12, 30, and 5."}]
    call, completed = round_trip(lgos_client(), "simple-graph", ledger)
    print(f"graph called {call.name}({json.loads(call.arguments)})")
    print(completed.output_text)
