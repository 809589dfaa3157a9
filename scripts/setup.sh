#!/usr/bin/env bash
# Installs what Quarry needs to build and test on Debian/Ubuntu:
# the HDF5 C library (libhdf5-dev, for gonum.org/v1/hdf5 via cgo), pkg-config
# and gcc, plus the Go modules. System packages are installed with apt-get
# when running as root (apt-get update first when the package lists are
# empty); otherwise the script says what to run and fails.
set -euo pipefail

need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if ! { [ -f /usr/include/hdf5/serial/hdf5.h ] || [ -f /usr/include/hdf5.h ]; }; then
  need+=(libhdf5-dev)
fi
if [ "${QUARRY_NEED_NODE:-0}" = 1 ] && ! command -v npm >/dev/null 2>&1; then
  need+=(nodejs npm)
fi

# The console's browser tests drive Debian's chromium (make test asks for it).
if [ "${QUARRY_NEED_BROWSER:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  need+=(chromium)
fi

# The replica tests share state through Debian's redis-server (make test asks for it).
if [ "${QUARRY_NEED_REDIS:-0}" = 1 ] && ! command -v redis-server >/dev/null 2>&1; then
  need+=(redis-server)
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]} with apt-get" >&2
    if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' || true)" ]; then
      apt-get update -qq
    fi
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    fi
  else
    echo "setup: missing system packages: ${need[*]}" >&2
    echo "setup: run: sudo apt-get update && sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
fi

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not installed (need Go 1.26+): see https://go.dev/doc/install" >&2
  exit 1
fi
go mod download
