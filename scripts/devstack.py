"""The native (no-Docker) demo stack: ``python scripts/devstack.py up|down|status|restart``.

The runner is the ``lgos_stack`` package (``scripts/dev-stack``); ``--help`` lists the commands and
the variables it reads.
"""

from lgos_stack.cli import main

if __name__ == "__main__":
    main()
