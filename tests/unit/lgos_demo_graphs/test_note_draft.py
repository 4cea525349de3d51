"""advanced-graph's note as stored: one title heading, then a body that does not repeat it."""

from __future__ import annotations

import pytest
from lgos_demo_graphs.advanced.notebook import Draft, note_markdown


@pytest.mark.parametrize(
    "markdown",
    [
        "# Staging password\n\nThe staging password rotates every 30 days.\n",
        # No heading: the title becomes one.
        "The staging password rotates every 30 days.",
        # The body opens with the bare title (as text or bold): said once, as the heading.
        "Staging password\n\nThe staging password rotates every 30 days.",
        "# Staging password\n\n**Staging password**\n\nThe staging password rotates every 30 days.",
    ],
)
def test_the_title_is_said_once_as_the_heading(markdown: str) -> None:
    draft = Draft(title="Staging password", markdown=markdown)
    assert note_markdown(draft) == (
        "# Staging password\n\nThe staging password rotates every 30 days.\n"
    )


def test_the_model_heading_wins_and_the_rest_is_kept_as_written() -> None:
    draft = Draft(
        title="Passwords",
        markdown="## Staging password\n\nRotates every 30 days.\n\n- Revision: add TTLs\n",
    )
    assert note_markdown(draft) == (
        "# Staging password\n\nRotates every 30 days.\n\n- Revision: add TTLs\n"
    )


def test_a_draft_without_any_title_is_a_note() -> None:
    assert note_markdown(Draft(title=" ", markdown="Buy milk.")) == "# Note\n\nBuy milk.\n"
