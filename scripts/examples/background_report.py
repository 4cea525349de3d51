"""Run background-report in the background: create, poll until it finishes, print the report.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/background_report.py
"""

from __future__ import annotations

import time
import uuid

from connect import lgos_client

client = lgos_client()
# The Idempotency-Key makes a retried create return this same Response instead of a new run.
response = client.responses.create(
    model="background-report",
    input="Report on idempotency keys in job queues.",
    background=True,
    extra_headers={"Idempotency-Key": str(uuid.uuid4())},
)
print(f"{response.id} {response.status}")
while response.status in ("queued", "in_progress"):
    time.sleep(0.5)
    response = client.responses.retrieve(response.id)
print(f"{response.status}")
for item in response.output:
    if item.type == "message" and item.phase == "commentary":
        print(f"status: {item.content[0].text}")  # type: ignore[union-attr]
print(response.output_text.splitlines()[-1] if response.output_text else "")
