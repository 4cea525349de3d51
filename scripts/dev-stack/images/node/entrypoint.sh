#!/bin/sh
# As the official image's entrypoint: a first argument that is an option or no command on the
# PATH is a script or option for node.
set -e
if [ "${1#-}" != "$1" ] || ! command -v -- "$1" > /dev/null 2>&1; then
    set -- node "$@"
fi
exec "$@"
