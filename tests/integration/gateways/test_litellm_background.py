"""Background Responses through the LiteLLM gateway: poll, cancel and idempotent creation.

LiteLLM rewrites Response ids; retrieve and cancel must still reach the right LGOS Response, and
the client's Idempotency-Key must survive the hop (LiteLLM forwards only x- headers on its own:
gateways/litellm/lgos_idempotency.py carries this one).
"""

from __future__ import annotations

import uuid
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.background import poll, slow
from tests.support.graphs import SCRIPTED_TEXT

MODEL = "lgos/slow-background"


async def test_create_and_poll_through_the_gateway(gateway: AsyncOpenAI) -> None:
    queued = await gateway.responses.create(
        model=MODEL, input="through the gateway", background=True, metadata=slow(0.2)
    )
    assert queued.status == "queued"
    done = await poll(gateway, queued.id)
    assert done.status == "completed"
    assert done.output_text == SCRIPTED_TEXT


async def test_a_retry_with_the_same_key_names_the_same_run(gateway: AsyncOpenAI) -> None:
    # LiteLLM encrypts the ids it hands out (a fresh nonce each time), so the two ids differ
    # even for one LGOS Response: cancelling through one and reading through the other shows
    # whether they are the same run.
    key = {"Idempotency-Key": f"gw-{uuid.uuid4().hex}"}
    body: dict[str, Any] = {
        "model": MODEL,
        "input": f"once {key['Idempotency-Key']}",
        "background": True,
        "metadata": slow(30),
    }
    first = await gateway.responses.create(**body, extra_headers=key)
    retried = await gateway.responses.create(**body, extra_headers=key)
    assert (await gateway.responses.cancel(retried.id)).status == "cancelled"
    assert (await gateway.responses.retrieve(first.id)).status == "cancelled"
    with pytest.raises(openai.UnprocessableEntityError):  # the key reached LGOS
        await gateway.responses.create(**{**body, "input": "another"}, extra_headers=key)


async def test_without_a_key_each_create_is_its_own_run(gateway: AsyncOpenAI) -> None:
    body: dict[str, Any] = {
        "model": MODEL,
        "input": "twice",
        "background": True,
        "metadata": slow(30),
    }
    first = await gateway.responses.create(**body)
    second = await gateway.responses.create(**body)
    assert (await gateway.responses.cancel(second.id)).status == "cancelled"
    assert (await gateway.responses.retrieve(first.id)).status in ("queued", "in_progress")
    await gateway.responses.cancel(first.id)


async def test_cancel_through_the_gateway(gateway: AsyncOpenAI) -> None:
    queued = await gateway.responses.create(
        model=MODEL, input="cancel me", background=True, metadata=slow(5)
    )
    cancelled = await gateway.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"
    again = await gateway.responses.cancel(queued.id)
    assert again.status == "cancelled"
    assert (await gateway.responses.retrieve(queued.id)).status == "cancelled"
