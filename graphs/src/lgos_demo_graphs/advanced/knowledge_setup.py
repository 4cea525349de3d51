"""The one-shot knowledge job: create the knowledge vector store, or reuse the one with its name.

``python -m lgos_demo_graphs.advanced.knowledge_setup [--id-file PATH]`` prints the store id (and
writes it to ``--id-file``, where LGOS reads it as ``DEMO_API_VECTOR_STORE_ID_FILE``). Running
it again finds the same store by name, so the job is idempotent. It reads the same
``DEMO_API_*`` settings as advanced-graph and waits a bounded time for the service to answer.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import openai
from openai import AsyncOpenAI

from lgos_demo_graphs.advanced.settings import KnowledgeSettings

_RETRY_SECONDS = 0.5


async def ensure_store(client: AsyncOpenAI, name: str) -> str:
    """The oldest store named ``name``, created when there is none."""
    named = [store async for store in client.vector_stores.list(order="asc") if store.name == name]
    if named:
        return named[0].id
    return (await client.vector_stores.create(name=name)).id


async def run(settings: KnowledgeSettings, wait_seconds: float) -> str:
    key = settings.store_api_key.get_secret_value() if settings.store_api_key else "no-key"
    deadline = time.monotonic() + wait_seconds
    async with AsyncOpenAI(base_url=settings.store_base_url, api_key=key, max_retries=0) as client:
        while True:
            try:
                return await ensure_store(client, settings.vector_store_name)
            except (openai.APIConnectionError, openai.InternalServerError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(_RETRY_SECONDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--id-file", type=Path, help="also write the store id here")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds to wait for the service")
    args = parser.parse_args(argv)
    settings = KnowledgeSettings()
    try:
        store_id = asyncio.run(run(settings, args.wait))
    except openai.APIError as exc:
        sys.stderr.write(f"knowledge setup failed at {settings.store_base_url}: {exc}\n")
        return 1
    if args.id_file is not None:
        args.id_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.id_file.with_suffix(".tmp")
        temporary.write_text(store_id + "\n")
        temporary.replace(args.id_file)  # readers never see a half-written id
    sys.stdout.write(store_id + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
