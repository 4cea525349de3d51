"""Product files speak of the product: no references to the project's issue numbers and no words
about how the work was organised (sessions, leads, helpers, branches, worktrees, pull requests).

Every tracked text file is read (code, docs, configs, comments, tests); git history is not.
A reference to another project's issue stays allowed when it names that project
("Chainlit #2611"). This module's own patterns are the one exception."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()
SKIP_SUFFIXES = (".lock", ".png", ".jpg", ".ico", ".woff2")

ISSUE = re.compile(r"\b(issue|ticket)s?\s*#?\s*\d+", re.I)
"""``issue 12``, ``issue #12``."""
BARE_REFERENCE = re.compile(r"(?<![\w&/\[{'\"=#-])#\d+\b")
"""``#12``, an issue reference unless a project's name precedes it (``Chainlit #2611``)."""


def issue_reference(line: str) -> str | None:
    if match := ISSUE.search(line):
        return match.group(0)
    for match in BARE_REFERENCE.finditer(line):
        before = line[: match.start()].split()
        word = before[-1].lstrip("([{'\"") if before else ""
        if not (word[:1].isupper() and word.isalpha()):
            return match.group(0)
    return None


ORGANISATION = re.compile(
    r"\b(this|previous|earlier|next|another|a later|an earlier) (session|helper)\b"
    r"|\bthe lead\b|\blead engineer\b"
    r"|\b(this|that|my|our|the feature|a feature|another) branch\b|\bbranch (was )?merged\b"
    r"|\bworktrees?\b|\bthis PR\b|\bpull requests?\b"
    r"|\bother (developers|engineers)\b|\bthe issue'?s?\b|\bthe_issue",
    re.I,
)
"""Words about who did the work and how it was split, in that sense."""


def organisation_words(line: str) -> str | None:
    match = ORGANISATION.search(line)
    return match.group(0) if match else None


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [
        name
        for name in listed.split("\0")
        if name and name != SELF and not name.endswith(SKIP_SUFFIXES)
    ]


def offending_lines(find: Callable[[str], str | None]) -> list[str]:
    found = []
    for name in tracked_files():
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if hit := find(line):
                found.append(f"{name}:{number}: {hit!r} in {line.strip()[:120]}")
    return found


def test_no_issue_numbers() -> None:
    found = offending_lines(issue_reference)
    assert not found, "issue references in product files:\n" + "\n".join(found)


def test_no_words_about_how_the_work_was_organised() -> None:
    found = offending_lines(organisation_words)
    assert not found, "process words in product files:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_mean() -> None:
    for text in ("see issue #14", "Issue 7 moved these", "fixed in #21", "(#16): killed"):
        assert issue_reference(text), text
    for text in ("Chainlit #2611", "(Chainlit #2611)", "&#8212;", "[K1]", "id=#3", "step 2"):
        assert not issue_reference(text), text
    for text in (
        "the lead merges",
        "this session ran",
        "on this branch",
        "a git worktree",
        "the_issue",
    ):
        assert ORGANISATION.search(text), text
    for text in ("mcp-session-id", "a pytest session", "the leading space", "helpers"):
        assert not ORGANISATION.search(text), text
