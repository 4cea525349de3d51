"""The environment-variable reference: ``python -m scripts.env_reference --write`` regenerates
docs/reference/environment.md (``make env-docs``); ``--check`` exits 1 when a variable is
undocumented, documented but read by nothing, or the page is out of date."""

from __future__ import annotations

import argparse
import sys

from lgos_stack import envdocs
from lgos_stack.paths import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the page")
    parser.add_argument("--check", action="store_true", help="fail on problems or a stale page")
    args = parser.parse_args()
    variables = envdocs.collect()
    problems = envdocs.problems(variables)
    for problem in problems:
        print(problem, file=sys.stderr)
    page = envdocs.render(variables)
    if args.write:
        envdocs.PAGE.write_text(page)
        print(f"wrote {envdocs.PAGE.relative_to(ROOT)} ({len(variables)} variables)")
    elif args.check and envdocs.PAGE.read_text() != page:
        print("docs/reference/environment.md is out of date: run `make env-docs`", file=sys.stderr)
        sys.exit(1)
    elif not args.check:
        print(page)
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
