"""Cursor pagination the OpenAI way: ``limit``, ``order`` and an ``after``/``before`` object id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from psycopg import AsyncConnection, sql
from psycopg.rows import DictRow

from files_service.errors import InvalidRequestError

Order = Literal["asc", "desc"]


@dataclass(frozen=True)
class PageRequest:
    limit: int
    order: Order = "desc"
    after: str | None = None
    before: str | None = None

    def clause(
        self, table: str, id_column: str = "id", scope: tuple[str, str] | None = None
    ) -> tuple[sql.Composable, list[Any]]:
        """A WHERE fragment (``TRUE`` when unbounded) and its parameters, over ``table.seq``.

        ``scope`` (column, value) narrows the cursor lookup when ids repeat across parents.
        """
        parts: list[sql.Composable] = []
        params: list[Any] = []
        cursor = sql.SQL("(SELECT seq FROM {} WHERE {} = %s{})").format(
            sql.Identifier(table),
            sql.Identifier(id_column),
            sql.SQL(" AND {} = %s").format(sql.Identifier(scope[0])) if scope else sql.SQL(""),
        )
        forward, backward = (">", "<") if self.order == "asc" else ("<", ">")
        for value, op in ((self.after, forward), (self.before, backward)):
            if value is not None:
                parts.append(sql.SQL("seq {} {}").format(sql.SQL(op), cursor))
                params.extend([value, scope[1]] if scope else [value])
        if not parts:
            return sql.SQL("TRUE"), params
        return sql.SQL(" AND ").join(parts), params

    @property
    def backwards(self) -> bool:
        """``before`` alone pages toward the start: scan the other way, then restore ``order``."""
        return self.before is not None and self.after is None

    @property
    def scan(self) -> Literal["ASC", "DESC"]:
        """The SQL direction that reaches the rows next to the cursor first."""
        ascending = (self.order == "asc") != self.backwards
        return "ASC" if ascending else "DESC"

    def order_by(self) -> sql.Composable:
        return sql.SQL("ORDER BY seq {}").format(sql.SQL(self.scan))


def list_page(objects: list[dict[str, Any]], page: PageRequest) -> dict[str, Any]:
    """The list envelope from ``limit + 1`` rows fetched in ``page.scan`` direction (the extra
    one only says ``has_more``)."""
    data = objects[: page.limit]
    if page.backwards:
        data.reverse()
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": len(objects) > page.limit,
    }


async def check_cursors(
    conn: AsyncConnection[DictRow],
    page: PageRequest,
    table: str,
    id_column: str = "id",
    scope: tuple[str, str] | None = None,
) -> None:
    """An unknown ``after``/``before`` id is a client error, not an empty page."""
    for param, value in (("after", page.after), ("before", page.before)):
        if value is None:
            continue
        query = sql.SQL("SELECT 1 FROM {} WHERE {} = %s{}").format(
            sql.Identifier(table),
            sql.Identifier(id_column),
            sql.SQL(" AND {} = %s").format(sql.Identifier(scope[0])) if scope else sql.SQL(""),
        )
        args = [value, scope[1]] if scope else [value]
        if await (await conn.execute(query, args)).fetchone() is None:
            raise InvalidRequestError(f"No object with id '{value}' to page from.", param=param)
