#!/bin/sh
# As the official image's entrypoint: options alone (or a config file) run redis-server; the
# server runs without protected mode, which the official build disables at compile time.
set -e
case "$1" in
    -* | *.conf) set -- redis-server "$@" ;;
esac
if [ "$1" = redis-server ]; then
    case " $* " in
        *" --protected-mode "*) ;;
        *) set -- "$@" --protected-mode no ;;
    esac
fi
exec "$@"
