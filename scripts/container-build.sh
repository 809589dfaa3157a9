#!/usr/bin/env bash
# Builds bin/quarry the way the Dockerfile's build stage does (cgo, libhdf5),
# into $1 (default bin/quarry). The Dockerfile runs this script; so does the
# e2e test TestContainerBuildSteps, since no registry is reachable here to
# pull the base images for a real `docker build`.
set -euo pipefail
out=${1:-bin/quarry}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
pkg-config --exists hdf5 || { echo "container-build: libhdf5-dev and pkg-config are needed" >&2; exit 1; }
CGO_ENABLED=1 go build -ldflags "-s -w -X main.version=${version}" -o "$out" ./cmd/quarry
