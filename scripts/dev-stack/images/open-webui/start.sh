#!/usr/bin/env bash
# As the official image's start.sh: the session key from WEBUI_SECRET_KEY, else one generated
# once and kept in the data folder; then the server on 0.0.0.0:$PORT.
set -euo pipefail
if [ -z "${WEBUI_SECRET_KEY:-}" ]; then
    key_file="${DATA_DIR}/.webui_secret_key"
    if [ ! -s "$key_file" ]; then
        python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$key_file"
    fi
    WEBUI_SECRET_KEY="$(cat "$key_file")"
    export WEBUI_SECRET_KEY
fi
exec open-webui serve --host "${HOST:-0.0.0.0}" --port "${PORT:-8080}"
