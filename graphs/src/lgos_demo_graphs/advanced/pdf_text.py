"""The text of a PDF attachment, read with pypdf within a page and a character limit.

PDFs come from users, so every failure to parse one (a damaged file, a password, a trick
inside) becomes :class:`UnreadablePDFError` with a short reason, never an exception that
would end the run.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError

# pypdf logs every repair it makes to a damaged file; the reader gets one short reason instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)


class UnreadablePDFError(ValueError):
    """The bytes are no PDF whose text can be read; the message says why, in a few words."""


@dataclass(frozen=True, slots=True)
class PDFText:
    text: str
    pages_read: int
    pages_total: int
    truncated: bool
    """The character limit cut the text of the pages read."""


ENCRYPTED = "it is encrypted with a password, so its text could not be read"
DAMAGED = "it is damaged or not a valid PDF, so its text could not be read"


def pdf_text(data: bytes, max_pages: int, max_chars: int) -> PDFText:
    """The text of the first ``max_pages`` pages, at most ``max_chars`` characters."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadablePDFError(ENCRYPTED)
        total = len(reader.pages)
        pages: list[str] = []
        length = 0
        for page in reader.pages[:max_pages]:
            text = (page.extract_text() or "").strip()
            pages.append(text)
            length += len(text) + 2
            if length > max_chars:
                break
    except UnreadablePDFError:
        raise
    except FileNotDecryptedError:
        raise UnreadablePDFError(ENCRYPTED) from None
    except Exception as exc:  # any parser failure on user bytes means "damaged"
        raise UnreadablePDFError(DAMAGED) from exc
    joined = "\n\n".join(page for page in pages if page)
    return PDFText(joined[:max_chars], len(pages), total, len(joined) > max_chars)
