"""Relative links in every tracked Markdown file (README.md, the docs site, the packages'
READMEs) name a file that exists and, with ``#anchor``, a heading of that file, and every image
they show exists. The site's own strict build checks its pages too; this also covers the files
outside ``docs/``."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
SCREENSHOTS = ROOT / "docs" / "assets" / "screenshots"


def markdown_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "*.md"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name]


def outside_fences(text: str) -> str:
    kept, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code."""
    return re.sub(r"`[^`\n]*`", "", outside_fences(text))


def slug(heading: str) -> str:
    """Python-Markdown's default ``toc`` slug, which MkDocs uses."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*$", outside_fences(path.read_text()), re.M)
    return {slug(h) for h in headings}


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in LINK.findall(prose(path.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            continue  # external (http:, mailto:) or site-absolute
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}: {target}"
        if not linked.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{where} (no heading #{anchor})")
    return broken


def test_every_relative_link_resolves() -> None:
    files = markdown_files()
    assert any(f.name == "README.md" for f in files) and len(files) > 40
    broken = [link for path in files for link in broken_links(path)]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading\n")
    page.write_text(
        "# Page\n[ok](other.md#a-code-heading) [gone](missing.md) [bad](other.md#nope)\n"
        "```\n[in code](ignored.md)\n```\n[web](https://example.org) [self](#page)\n"
    )
    assert broken_links(page, tmp_path) == [
        "page.md: missing.md (no such file)",
        "page.md: other.md#nope (no heading #nope)",
    ]


def missing_images(path: Path, root: Path = ROOT) -> list[str]:
    missing = []
    for target in IMAGE.findall(prose(path.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            continue
        if not (path.parent / target.partition("#")[0]).resolve().is_file():
            missing.append(f"{path.relative_to(root)}: {target}")
    return missing


def test_every_image_shown_exists() -> None:
    files = markdown_files()
    shown = [target for path in files for target in IMAGE.findall(prose(path.read_text()))]
    assert sum("screenshots/" in target for target in shown) >= 8, shown
    missing = [image for path in files for image in missing_images(path)]
    assert not missing, "images that do not exist:\n" + "\n".join(missing)


def test_every_screenshot_in_the_docs_is_shown() -> None:
    """No copied screenshot is left unused (``make docs-screenshots`` copies what pages show)."""
    pages = "\n".join(path.read_text() for path in (ROOT / "docs").rglob("*.md"))
    unused = [
        str(png.relative_to(SCREENSHOTS))
        for png in sorted(SCREENSHOTS.rglob("*.png"))
        if f"screenshots/{png.relative_to(SCREENSHOTS)}" not in pages
    ]
    assert not unused, f"screenshots no page shows: {unused}"


def test_the_checker_sees_a_missing_image(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "there.png").write_bytes(b"png")
    page.write_text(
        '# Page\n![ok](there.png) ![gone](gone.png "title") [a link](there.png)\n'
        "```\n![in code](ignored.png)\n```\n![web](https://example.org/x.png)\n"
    )
    assert missing_images(page, tmp_path) == ["page.md: gone.png"]
