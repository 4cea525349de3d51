"""Copy screenshots from the browser tests' last run into the docs (``make docs-screenshots``).

The e2e tests save every step under .dev/screenshots/<ui>/ (tests/support/browser.py); the docs
show a few of them from docs/assets/screenshots/<ui>/, so what the pages show is what the tests
saw. Run the browser tests first (``make test-e2e`` or one module, e.g.
``pytest tests/e2e/test_chainlit_ui.py``); ``--ui`` copies one UI's images only (after one
module), ``--source`` reads another run's folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from lgos_stack.paths import ROOT

TARGET = ROOT / "docs" / "assets" / "screenshots"
SHOWN = {
    "chainlit/chat.png": ("chainlit", "plain_chat_streams_the_answer-01-*.png"),
    "chainlit/citations.png": (
        "chainlit",
        "research_cites_a_url_searxng_returned-advanced-graph-01-*.png",
    ),
    "chainlit/review.png": (
        "chainlit",
        "advanced_graph_save_approve_then_a_later_question_finds_the_note-01-*.png",
    ),
    "chainlit/attachment.png": ("chainlit", "advanced_graph_quotes_an_attached_file-02-*.png"),
    "open-webui/chat.png": (
        "open-webui",
        "plain_chat_streams_the_answer-simple-graph-*-streamed-answer.png",
    ),
    "open-webui/citations.png": (
        "open-webui",
        "research_shows_status_lines_and_a_clickable_source-advanced-graph-*-sources-opened.png",
    ),
    "open-webui/review.png": (
        "open-webui",
        "advanced_graph_save_approve_then_a_later_chat_finds_the_note-*-note-review-with-the-draft.png",
    ),
    "open-webui/attachment.png": (
        "open-webui",
        "advanced_graph_quotes_an_attached_file_read_through_the_files_service-*-answer-quotes-the-file.png",
    ),
}
"""Docs image -> (the browser test's screenshot folder, the file pattern of the step shown)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=ROOT / ".dev" / "screenshots")
    uis = sorted({folder for folder, _ in SHOWN.values()})
    parser.add_argument("--ui", choices=uis, action="append", help="only this UI (repeatable)")
    args = parser.parse_args()
    missing = []
    for name, (folder, pattern) in SHOWN.items():
        if args.ui and folder not in args.ui:
            continue
        found = sorted((args.source / folder).glob(pattern), key=lambda p: p.stat().st_mtime)
        if not found:
            missing.append(f"{name}: no {folder}/{pattern} (run tests/e2e for {folder})")
            continue
        target = TARGET / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found[-1], target)
        print(f"{name} <- {found[-1].relative_to(args.source)}")
    for line in missing:
        print(line, file=sys.stderr)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
