"""The local Docker engine and base images: ``python scripts/containers.py up|images|down|status``.

The commands live in ``lgos_stack.containers`` (``scripts/dev-stack``); ``--help`` lists them.
"""

from lgos_stack.containers.cli import main

if __name__ == "__main__":
    main()
