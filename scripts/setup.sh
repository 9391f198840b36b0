#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install headd with its test tools. Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.headd-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setting up .venv (installing headd and its dependencies; the first run takes ~30 s)" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  # pip's and setuptools' chatter (an editable install's BuildBackendWarning) goes to a log,
  # shown only when the install fails.
  if ! .venv/bin/python -m pip install -q -e ".[test,embed,bench,mcp,console]" >.venv/pip-install.log 2>&1; then
    cat .venv/pip-install.log >&2
    exit 1
  fi
  .venv/bin/python -c "import headd, headd_client, headd_plane, pygit2, selectolax, pyrsistent, msgspec, uvloop, numpy"
  touch "$stamp"
fi
