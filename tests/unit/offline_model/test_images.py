"""offline-model and image parts: type and pixel size read from the header bytes, said in the
readable and the echo answer, and paired with the ``Attached image`` line that names them."""

from __future__ import annotations

import base64

import pytest
from offline_model.answer import LABEL, Prompt
from offline_model.compose import compose_answer
from offline_model.images import Image, image_of
from offline_model.prompts import chat_prompt, responses_prompt

from tests.support.documents import gif_bytes, jpeg_bytes, png_bytes, webp_bytes


def data_url(data: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (png_bytes(64, 32), "PNG"),
        (gif_bytes(64, 32), "GIF"),
        (jpeg_bytes(64, 32), "JPEG"),
        (webp_bytes(64, 32), "WebP"),
    ],
)
def test_each_image_type_is_read_with_its_pixel_size(data: bytes, kind: str) -> None:
    assert image_of(data_url(data)) == Image(kind, 64, 32)
    assert image_of(data_url(data)).describe() == f"a {kind} image, 64x32 pixels"


def test_what_is_no_image_is_said_so_and_remote_urls_are_not_fetched() -> None:
    assert image_of(data_url(b"not an image")).describe() == "image data I could not decode"
    assert image_of("data:image/png;base64,@@@").kind is None
    assert image_of("data:image/png,rawbytes").kind is None
    remote = image_of("https://images.example/cat.png")
    assert remote.describe() == "an image at https://images.example/cat.png (not fetched)"
    assert image_of(data_url(b"\xff\xd8\xff\xe0")).describe() == (
        "a JPEG image whose size I could not read"
    )


def _responses_body(text: str, url: str) -> dict[str, object]:
    content = [
        {"type": "input_text", "text": text},
        {"type": "input_image", "image_url": url, "detail": "auto"},
    ]
    return {"input": [{"role": "user", "content": content}]}


def test_an_attached_image_line_is_answered_with_what_the_image_part_holds() -> None:
    marker = "What is this?\n\nAttached image chart.png (file-1): a PNG image, sent as input.\n"
    prompt = responses_prompt(_responses_body(marker, data_url(png_bytes(40, 30))))
    answer = compose_answer(prompt)
    assert answer.splitlines() == [
        f'{LABEL} You asked: "What is this?".',
        "I looked at the attached image chart.png (file-1): a PNG image, 40x30 pixels.",
    ]
    assert "Images: a PNG image, 40x30 pixels." in compose_answer(prompt, echo=True)


def test_image_parts_without_a_line_and_lines_without_a_part_are_both_said() -> None:
    bare = responses_prompt(_responses_body("Look.", data_url(gif_bytes(5, 7))))
    assert "I received a GIF image, 5x7 pixels." in compose_answer(bare)
    lost = Prompt(user=["Look.\n\nAttached image a.png (file-2): a PNG image."])
    assert "The attached image a.png (file-2) did not reach me as an image." in compose_answer(lost)


def test_chat_image_parts_count_too_and_only_the_latest_messages_images_are_answered() -> None:
    url = data_url(webp_bytes(9, 4))
    messages = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]},
        {"role": "assistant", "content": "seen"},
        {"role": "user", "content": "And now?"},
    ]
    assert chat_prompt(messages).images == []
    assert chat_prompt(messages[:1]).images == [Image("WebP", 9, 4)]


@pytest.mark.parametrize(
    "data",
    [
        png_bytes(4, 4)[:20],
        gif_bytes(4, 4)[:8],
        jpeg_bytes(4, 4)[:12],
        b"\xff\xd8\xff\xc0\x00",
        webp_bytes(4, 4)[:22],
        b"RIFF\x00\x00\x00\x00WEBPVP8 ",
    ],
)
def test_cut_short_headers_never_raise(data: bytes) -> None:
    image = image_of(data_url(data))
    assert image.width == image.height == 0
    assert image.describe()
