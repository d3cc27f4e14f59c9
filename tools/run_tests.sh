#!/usr/bin/env bash
# Sets everything up, then runs every check: ruff, mypy, the firmware build and
# its host unit tests, and the whole pytest suite (on all cores).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
bash tools/setup.sh
export PATH="$here/.venv/bin:$PATH"
echo "== ruff"; ruff check dsp hostapp hardware tests tools
echo "== mypy"; mypy
if [ -f firmware/Makefile ]; then
  echo "== firmware"; make -s -C firmware all
fi
echo "== pytest"
exec pytest -n "${TOWEREAR_TEST_JOBS:-auto}" -q "$@"
