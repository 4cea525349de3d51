"""advanced-graph understanding attached files, through a real LGOS process and the strict
OpenAI SDK, against the real Files service and offline-model's readable answers: a PDF's text,
an image sent as image input, a page and a byte limit said in the answer, an encrypted and a
damaged PDF answered (never a 500), a PDF sent as file input or as its text as
DEMO_API_PDF_INPUT says (offline-model in echo mode shows which reached it), and a note drafted
from an attached file, approved, then found by a knowledge search."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from offline_model.answer import LABEL
from openai import AsyncOpenAI

from tests.support.advanced import (
    MODEL,
    advanced_lgos,
    answer_review,
    create_knowledge,
    demo_env,
    note_files,
    review_payload,
    seed_note,
    store_file_ids,
)
from tests.support.clients import sdk_fixture
from tests.support.documents import BROKEN_PDF, pdf_bytes, png_bytes
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import FilesProcess, files_client
from tests.support.servers import Server

MAX_PAGES = 3
MAX_BYTES = 64 * 1024
REPORT = [
    "Quarterly report\nRevenue grew 12 percent to PDF_REVENUE_MARKER.",
    "Costs fell by 3 percent.\nHiring paused until the audit ends.",
]


@pytest.fixture(scope="module")
async def files(files_process: FilesProcess) -> AsyncIterator[AsyncOpenAI]:
    async with files_client(f"{files_process.server.url}/v1") as sdk:
        yield sdk


@pytest.fixture(scope="module")
async def store_id(files: AsyncOpenAI) -> str:
    store_id = await create_knowledge(files, "advanced-graph-file-understanding")
    # A note the search must rank below the one drafted from the attachment.
    await seed_note(files, store_id, "note-lunch.md", "Lunch is served at noon in the canteen.")
    return store_id


@pytest.fixture(scope="module")
def lgos(
    readable_model: Server,
    searxng: Server,
    files_process: FilesProcess,
    store_id: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    env = demo_env(readable_model, searxng, files_process.server.url, store_id, FILES_KEY)
    env["DEMO_API_MAX_ATTACHMENT_PAGES"] = str(MAX_PAGES)
    env["DEMO_API_MAX_ATTACHMENT_BYTES"] = str(MAX_BYTES)
    with advanced_lgos(tmp_path_factory.mktemp("advanced-files"), env) as server:
        yield server


client = sdk_fixture("lgos")


@pytest.fixture(scope="module", params=["text", "file"])
def echo_lgos(
    request: pytest.FixtureRequest,
    offline_model: Server,
    searxng: Server,
    files_process: FilesProcess,
    store_id: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Server]]:
    """advanced-graph against offline-model in echo mode, with each DEMO_API_PDF_INPUT."""
    env = demo_env(offline_model, searxng, files_process.server.url, store_id, FILES_KEY)
    env["DEMO_API_MAX_ATTACHMENT_PAGES"] = str(MAX_PAGES)
    if request.param == "file":  # "text" is the default: left unset
        env["DEMO_API_PDF_INPUT"] = "file"
    state = tmp_path_factory.mktemp(f"advanced-pdf-{request.param}")
    with advanced_lgos(state, env, name=f"lgos-pdf-{request.param}") as server:
        yield request.param, server


echo_client = sdk_fixture("echo_lgos", lambda found: found[1])


async def upload(files: AsyncOpenAI, name: str, data: bytes) -> str:
    return (await files.files.create(file=(name, data), purpose="user_data")).id


async def ask(client: AsyncOpenAI, text: str, *file_ids: str, **options: Any) -> Any:
    content: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
    content += [{"type": "input_file", "file_id": file_id} for file_id in file_ids]
    return await client.responses.create(
        model=MODEL, input=[{"role": "user", "content": content}], store=False, **options
    )


async def test_a_pdf_is_answered_from_its_text(client: AsyncOpenAI, files: AsyncOpenAI) -> None:
    file_id = await upload(files, "report.pdf", pdf_bytes(REPORT))
    response = await ask(client, "What does the attached report say?", file_id)
    assert response.status == "completed"
    assert response.output_text.startswith(LABEL)
    assert (
        f'I read the attached file report.pdf ({file_id}): "Quarterly report Revenue grew 12 '
        "percent to PDF_REVENUE_MARKER. Costs fell by 3 percent."
    ) in response.output_text
    assert "were read" not in response.output_text  # within every limit: nothing to say


async def test_pdf_input_decides_whether_the_model_gets_the_pdf_or_its_text(
    echo_lgos: tuple[str, Server], echo_client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    data = pdf_bytes(REPORT)
    file_id = await upload(files, "report.pdf", data)
    response = await ask(echo_client, "What does the attached report say?", file_id)
    assert response.status == "completed"
    said = response.output_text
    if echo_lgos[0] == "file":
        assert f"Attached PDF report.pdf ({file_id}): 2 pages, sent as file input." in said
        assert f"File inputs: a PDF file report.pdf of {len(data)} bytes." in said
        assert "PDF_REVENUE_MARKER" not in said  # the text was not extracted for the model
    else:
        assert f"Attached file report.pdf ({file_id}):" in said
        assert "Revenue grew 12 percent to PDF_REVENUE_MARKER." in said
        assert "File inputs:" not in said and "sent as file input" not in said


async def test_a_png_reaches_the_model_as_an_image(client: AsyncOpenAI, files: AsyncOpenAI) -> None:
    file_id = await upload(files, "chart.png", png_bytes(120, 80))
    response = await ask(client, "What is in this picture?", file_id)
    assert (
        f"I looked at the attached image chart.png ({file_id}): a PNG image, 120x80 pixels."
    ) in response.output_text.splitlines()


async def test_a_pdf_and_an_image_in_one_message_are_both_understood(
    client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    pdf = await upload(files, "memo.pdf", pdf_bytes(["MEMO_MARKER: ship on Friday."]))
    png = await upload(files, "photo.png", png_bytes(7, 5))
    stream = await ask(client, "Compare these.", pdf, png, stream=True)
    events = [event async for event in stream]
    assert events[-1].type == "response.completed"
    text = events[-1].response.output_text
    assert f'memo.pdf ({pdf}): "MEMO_MARKER: ship on Friday."' in text
    assert f"photo.png ({png}): a PNG image, 7x5 pixels." in text


async def test_pages_past_the_limit_are_left_and_the_answer_says_so(
    client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    pages = [f"Page {n} says PAGE_{n}_MARKER." for n in range(1, 6)]
    file_id = await upload(files, "long.pdf", pdf_bytes(pages))
    response = await ask(client, "Summarize the attached file.", file_id)
    text = response.output_text
    assert "PAGE_3_MARKER" in text or "PAGE_1_MARKER" in text
    assert "PAGE_4_MARKER" not in text
    assert "Only the first 3 pages of long.pdf were read (it has 5; the limit is 3 pages)." in text


async def test_a_file_over_the_byte_limit_is_named_as_too_large(
    client: AsyncOpenAI, files: AsyncOpenAI
) -> None:
    big = pdf_bytes(["BIG_MARKER " + "x" * 80] * 20) + b"%" + b"0" * MAX_BYTES
    file_id = await upload(files, "huge.pdf", big)
    response = await ask(client, "Read the attached file.", file_id)
    assert response.status == "completed"
    assert "BIG_MARKER" not in response.output_text
    assert "huge.pdf is larger than the 64 KB limit." in response.output_text


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (BROKEN_PDF, "it is damaged or not a valid PDF"),
        (pdf_bytes(["LOCKED_MARKER"], password="s3cret"), "it is encrypted with a password"),
    ],
)
async def test_a_pdf_that_cannot_be_read_gets_a_short_reason_not_an_error(
    client: AsyncOpenAI, files: AsyncOpenAI, data: bytes, reason: str
) -> None:
    file_id = await upload(files, "bad.pdf", data)
    response = await ask(client, "What does the attached file say?", file_id)
    assert response.status == "completed"
    line = next(line for line in response.output_text.splitlines() if "bad.pdf" in line)
    assert line.startswith(f"I could not read the attached file bad.pdf ({file_id}): a PDF, but")
    assert reason in line
    assert "LOCKED_MARKER" not in response.output_text and "Traceback" not in response.output_text


async def test_a_note_of_a_files_key_points_is_reviewed_saved_and_then_found(
    client: AsyncOpenAI, files: AsyncOpenAI, store_id: str
) -> None:
    file_id = await upload(
        files,
        "runbook.pdf",
        pdf_bytes(["Failover runbook\nPromote the ZEBRAFISH replica first.", "Then rotate keys."]),
    )
    before = {f.id for f in await note_files(files)}
    pending = await ask(client, "Save the key points of this file as a note.", file_id)
    payload = review_payload(pending)
    assert payload["filename"].startswith("note-key-points-of-runbook-pdf-")
    assert payload["content"].startswith(
        f"# Key points of runbook.pdf\n\nFrom runbook.pdf ({file_id}):\n\n"
        "- Failover runbook\n- Promote the ZEBRAFISH replica first.\n- Then rotate keys.\n"
    )
    assert {f.id for f in await note_files(files)} == before  # nothing stored before review

    done = await client.responses.create(
        model=MODEL,
        input=answer_review(pending, "approve"),  # type: ignore[arg-type]
        previous_response_id=pending.id,
        store=False,
    )
    assert "it is indexed, so later research can find it" in done.output_text
    [note] = [f for f in await note_files(files) if f.id not in before]
    assert (await files.files.content(note.id)).content == payload["content"].encode()
    assert note.id in await store_file_ids(files, store_id)
    assert file_id not in await store_file_ids(files, store_id)  # the attachment itself is not

    found = await ask(client, "Search my notes: which ZEBRAFISH replica is promoted first?")
    assert f"[K1] {payload['filename']} (file id {note.id})" in found.output_text
    assert "Promote the ZEBRAFISH replica first." in found.output_text  # the note's own text
