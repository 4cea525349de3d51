"""Opaque ids and list envelopes."""

from __future__ import annotations

from files_service.ids import file_id, vector_store_id
from files_service.pagination import PageRequest, list_page


def test_ids_are_opaque_and_unique() -> None:
    ids = {file_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(i.startswith("file-") and i[5:].isalnum() and len(i) == 29 for i in ids)
    assert vector_store_id().startswith("vs_")


def test_list_page_uses_the_extra_row_for_has_more() -> None:
    rows = [{"id": str(i)} for i in range(3)]
    assert list_page(rows, PageRequest(limit=2)) == {
        "object": "list",
        "data": rows[:2],
        "first_id": "0",
        "last_id": "1",
        "has_more": True,
    }
    assert list_page([], PageRequest(limit=2))["has_more"] is False


def test_before_scans_toward_the_cursor_and_keeps_the_order() -> None:
    assert PageRequest(limit=2, order="desc").scan == "DESC"
    backwards = PageRequest(limit=2, order="desc", before="x")
    assert backwards.backwards and backwards.scan == "ASC"
    assert PageRequest(limit=2, order="asc", before="x").scan == "DESC"
    assert not PageRequest(limit=2, after="a", before="b").backwards
    # Rows arrive nearest-first; the page lists them in the requested order.
    page = list_page([{"id": "3"}, {"id": "4"}, {"id": "5"}], backwards)
    assert [o["id"] for o in page["data"]] == ["4", "3"] and page["has_more"]
