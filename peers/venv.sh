#!/usr/bin/env bash
# Creates (or reuses) peers/.venv with the pinned peers of peers/requirements.txt and
# prints its python. Sourced by the bench scripts; the environment is never tracked.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! cmp -s "$here/requirements.txt" "$stamp"; then
  "$venv/bin/pip" install -q -r "$here/requirements.txt" >&2
  cp "$here/requirements.txt" "$stamp"
fi
echo "$venv/bin/python"
