#!/usr/bin/env bash
# Sets everything up, then opens the towerear app (the simulated tower when no
# device is plugged in). Extra arguments go to `towerear`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
bash tools/setup.sh
if [ -f firmware/Makefile ]; then make -s -C firmware all >/dev/null 2>&1 || true; fi
exec "$here/.venv/bin/towerear" "$@"
