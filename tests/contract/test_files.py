"""The OpenAI Files API through the official SDK: every route, pagination, errors, safety."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import openai
import pytest
from openai import AsyncOpenAI

from tests.support.envelopes import envelope
from tests.support.files import API_KEY, FilesProcess, files_client


async def test_upload_retrieve_download_delete(files: AsyncOpenAI) -> None:
    data = b"The project marker is FILE_INPUT_OK.\n"
    uploaded = await files.files.create(file=("brief.txt", data), purpose="user_data")
    assert uploaded.id.startswith("file-") and len(uploaded.id) > 20
    assert uploaded.object == "file"
    assert (uploaded.bytes, uploaded.filename, uploaded.purpose) == (
        len(data),
        "brief.txt",
        "user_data",
    )
    assert uploaded.status == "processed" and uploaded.expires_at is None

    fetched = await files.files.retrieve(uploaded.id)
    assert fetched == uploaded

    content = await files.files.content(uploaded.id)
    assert content.content == data
    headers = content.response.headers
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert headers["content-length"] == str(len(data))
    assert headers["content-disposition"].startswith("attachment;")
    assert 'filename="brief.txt"' in headers["content-disposition"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-content-sha256"] == hashlib.sha256(data).hexdigest()

    deleted = await files.files.delete(uploaded.id)
    assert (deleted.id, deleted.deleted, deleted.object) == (uploaded.id, True, "file")
    with pytest.raises(openai.NotFoundError) as missing:
        await files.files.retrieve(uploaded.id)
    assert missing.value.body == envelope(
        f"No such file: '{uploaded.id}'.", "invalid_request_error", "file_id", "not_found"
    )


async def test_unknown_ids_are_404_on_every_file_route(files: AsyncOpenAI) -> None:
    for call in (files.files.retrieve, files.files.content, files.files.delete):
        with pytest.raises(openai.NotFoundError) as error:
            await call("file-doesnotexist")
        assert error.value.code == "not_found"


async def test_purpose_and_file_are_validated(files: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as error:
        await files.files.create(file=("a.txt", b"x"), purpose="nonsense")  # type: ignore[arg-type]
    assert error.value.param == "purpose"
    with pytest.raises(openai.BadRequestError) as error:
        await files.post(
            "/files", cast_to=httpx.Response, body={"purpose": "user_data"}, options={}
        )
    assert error.value.param == "file"


async def test_expires_after(files: AsyncOpenAI) -> None:
    uploaded = await files.files.create(
        file=("t.txt", b"x"),
        purpose="user_data",
        expires_after={"anchor": "created_at", "seconds": 3600},
    )
    assert uploaded.expires_at == uploaded.created_at + 3600
    for bad, param in (
        ({"anchor": "created_at", "seconds": 10}, "expires_after.seconds"),
        ({"anchor": "last_active_at", "seconds": 3600}, "expires_after.anchor"),
        ({"anchor": "created_at", "seconds": "³"}, "expires_after.seconds"),
    ):
        with pytest.raises(openai.BadRequestError) as error:
            await files.files.create(
                file=("t.txt", b"x"),
                purpose="user_data",
                expires_after=bad,  # type: ignore[arg-type]
            )
        assert error.value.param == param


async def test_list_paginates_filters_and_orders(asgi_files: AsyncOpenAI) -> None:
    ids = []
    for i in range(5):
        purpose = "assistants" if i % 2 else "user_data"
        created = await asgi_files.files.create(file=(f"f{i}.txt", b"x"), purpose=purpose)
        ids.append(created.id)

    first = await asgi_files.files.list(limit=2, order="asc")
    assert [f.id for f in first.data] == ids[:2] and first.has_more
    everything = [f.id async for f in asgi_files.files.list(limit=2, order="asc")]
    assert everything == ids
    newest_first = [f.id async for f in asgi_files.files.list(limit=3)]
    assert newest_first == ids[::-1]
    assistants = [f.id async for f in asgi_files.files.list(purpose="assistants", order="asc")]
    assert assistants == [ids[1], ids[3]]
    after = await asgi_files.files.list(after=ids[2], order="asc")
    assert [f.id for f in after.data] == ids[3:] and not after.has_more

    with pytest.raises(openai.BadRequestError) as error:
        await asgi_files.files.list(after="file-unknown")
    assert error.value.param == "after"
    with pytest.raises(openai.BadRequestError) as error:
        await asgi_files.files.list(limit=0)
    assert error.value.param == "limit"


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("../../../../etc/passwd", "passwd"),
        ("..\\..\\windows\\evil.txt", "evil.txt"),
        ("/abs/path/notes.md", "notes.md"),
        ("..", "file"),
        (".hidden", "hidden"),
    ],
)
async def test_path_traversal_filenames_are_sanitized(
    asgi_files: AsyncOpenAI, files_storage: Path, name: str, stored: str
) -> None:
    uploaded = await asgi_files.files.create(file=(name, b"payload"), purpose="user_data")
    assert uploaded.filename == stored
    # Bytes land under the storage root, named by the opaque id, never by the client's name.
    written = [p for p in files_storage.rglob("*") if p.is_file()]
    assert [p.name for p in written] == [uploaded.id]
    assert (await asgi_files.files.content(uploaded.id)).content == b"payload"


async def test_html_is_never_served_inline(files: AsyncOpenAI) -> None:
    page = b"<html><script>alert(1)</script></html>"
    uploaded = await files.files.create(file=("page.html", page, "text/html"), purpose="user_data")
    content = await files.files.content(uploaded.id)
    headers = content.response.headers
    assert headers["content-type"] == "application/octet-stream"
    assert headers["content-disposition"].startswith("attachment;")
    assert headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in headers["content-security-policy"]


async def test_unicode_filename_round_trips_in_content_disposition(files: AsyncOpenAI) -> None:
    uploaded = await files.files.create(file=("résumé été.txt", b"x"), purpose="user_data")
    assert uploaded.filename == "résumé été.txt"
    disposition = (await files.files.content(uploaded.id)).response.headers["content-disposition"]
    assert "filename*=UTF-8''r%C3%A9sum%C3%A9%20%C3%A9t%C3%A9.txt" in disposition


async def test_auth_failures_are_401_envelopes(files_process: FilesProcess) -> None:
    url = f"{files_process.server.url}/v1"
    for key in ("wrong-key", API_KEY[:-1]):
        async with files_client(url, api_key=key) as sdk:
            with pytest.raises(openai.AuthenticationError) as error:
                await sdk.files.list()
            assert error.value.status_code == 401
            assert error.value.body["type"] == "invalid_request_error"  # type: ignore[index]
            with pytest.raises(openai.AuthenticationError):
                await sdk.vector_stores.create(name="x")
    async with httpx.AsyncClient() as http:
        missing = await http.get(f"{url}/files")
        assert missing.status_code == 401
        assert set(missing.json()["error"]) == {"message", "type", "param", "code"}
        assert missing.headers["www-authenticate"] == "Bearer"
        assert (await http.get(f"{files_process.server.url}/health")).status_code == 200
    async with files_client(url, api_key="other-key") as sdk:  # every configured key works
        await sdk.files.list()
    async with files_client(url, api_key=API_KEY) as sdk:
        await sdk.files.list()
