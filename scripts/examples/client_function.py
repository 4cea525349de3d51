"""The client-function round trip: the graph asks for calculate_sum, we run it, it answers.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/client_function.py
"""

from __future__ import annotations

import json
import os
from typing import Any

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:3004/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "sk-lgos-local-only"),  # make dev's LGOS key
)
tool: Any = {
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
ledger: list[Any] = [{"role": "user", "content": "Add 12, 30, and 5."}]
called = client.responses.create(
    model="simple-graph",
    input=ledger,
    tools=[tool],
    store=False,
    tool_choice={"type": "function", "name": "calculate_sum"},
)
call = next(item for item in called.output if item.type == "function_call")
arguments = json.loads(call.arguments)
print(f"graph called {call.name}({arguments})")

ledger.extend(called.output)  # replay every output item unchanged
ledger.append(
    {
        "type": "function_call_output",
        "call_id": call.call_id,
        "output": json.dumps({"total": sum(arguments["numbers"])}),
    }
)
completed = client.responses.create(model="simple-graph", input=ledger, tools=[tool], store=False)
print(completed.output_text)
