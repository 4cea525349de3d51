"""The Makefile's install steps: ``python scripts/install.py apt|pip|run|npm-file ...``.

A failed step ends with one line naming the cause and the fix; the tool's whole output is in
``.dev/install/<name>.log`` (``lgos_stack.install``).
"""

import argparse
import sys
from pathlib import Path

# It runs before the workspace venv exists (it installs it): lgos_stack comes from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parent / "dev-stack" / "src"))

from lgos_stack import install


def say(line: str) -> None:
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goal", default="", help="the make goals, named in the root hint")
    commands = parser.add_subparsers(dest="command", required=True)
    apt = commands.add_parser("apt", help="apt-get install PACKAGE unless COMMAND is on PATH")
    apt.add_argument("package")
    apt.add_argument(
        "--command", dest="program", help="the program the package provides (default: PACKAGE)"
    )
    pip = commands.add_parser("pip", help="pip install ARGS into VENV (created when missing)")
    pip.add_argument("--name", help="the step's name in messages and its log (default: VENV's)")
    pip.add_argument("venv", type=Path)
    pip.add_argument("args", nargs=argparse.REMAINDER)
    run = commands.add_parser("run", help="run one install command: NAME INTO -- COMMAND...")
    run.add_argument("--cwd", type=Path)
    run.add_argument("name")
    run.add_argument("into", type=Path)
    run.add_argument("args", nargs=argparse.REMAINDER)
    npm_file = commands.add_parser("npm-file", help="one file of an npm package: SPEC FILE TARGET")
    npm_file.add_argument("spec")
    npm_file.add_argument("member")
    npm_file.add_argument("target", type=Path)
    args = parser.parse_args()
    try:
        if args.command == "apt":
            install.apt(args.package, args.program or args.package, args.goal, say)
        elif args.command == "pip":
            install.pip(args.venv, args.args, say, args.name)
        elif args.command == "run":
            command = args.args[1:] if args.args[:1] == ["--"] else args.args
            install.run(args.name, args.into, command, say, args.cwd)
        else:
            install.npm_file(args.spec, args.member, args.target, say)
    except KeyboardInterrupt:
        sys.exit("install interrupted: run make again to finish it")


if __name__ == "__main__":
    main()
