"""The native (no-Docker) demo stack: ``python scripts/devstack.py up|down|status|restart``.

The runner is the ``lgos_stack`` package (``scripts/dev-stack``); ``--help`` lists the commands and
the variables it reads.
"""

from lgos_stack.cli import main

# The Files service's local key, importable from here as before; it lives in lgos_stack.keys.
from lgos_stack.keys import FILES_DEV_KEY as FILES_DEV_KEY

if __name__ == "__main__":
    main()
