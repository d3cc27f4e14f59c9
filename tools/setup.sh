#!/usr/bin/env bash
# Installs everything towerear needs on a Debian/Ubuntu machine: system packages
# (AVR toolchain, simavr, Qt's runtime libraries, PortAudio, Xvfb, ngspice) and a
# virtual environment in .venv with the package and its dev tools.
# Safe to run again: it only installs what is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

APT_PACKAGES=(
  python3 python3-venv python3-pip python3-dev build-essential pkg-config git
  gcc-avr avr-libc binutils-avr avrdude simavr libsimavr-dev libelf-dev
  libportaudio2 ngspice xvfb xauth imagemagick socat
  libegl1 libgl1 libglx0 libfontconfig1 libfreetype6 libx11-6 libxcb1 libxkbcommon0
  libglib2.0-0 libdbus-1-3 fonts-dejavu-core
  libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1
  libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "towerear setup: installing system packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "towerear setup: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.towerear-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "towerear setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dev]"
  touch "$stamp"
fi
# Byte-compile our own modules: the editable install leaves them as source,
# and where PYTHONDONTWRITEBYTECODE is set every `towerear detect` would
# compile them again (0.1-0.2 s of a two-minute recording's run). Stale
# files are harmless: Python checks each against its source.
.venv/bin/python -m compileall -q dsp hostapp >/dev/null
