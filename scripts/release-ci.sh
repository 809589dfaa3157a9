#!/usr/bin/env bash
# The release check CI can afford: `goreleaser check`, then the release
# pipeline of .goreleaser.yaml cut to the host's cgo-free build (one target,
# not seven), and the binary from the unpacked archive run (version, then a
# catalog of the demo data). `make release-snapshot` builds every archive.
# goreleaser runs from the tools/goreleaser module (pinned, with go.sum).
set -euo pipefail
cd "$(dirname "$0")/.."
gorel=(go run -modfile=tools/goreleaser/go.mod github.com/goreleaser/goreleaser/v2)
"${gorel[@]}" check
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
goos=$(go env GOOS); goarch=$(go env GOARCH)
# The same configuration with the nocgo build's targets narrowed to the
# host and the HDF5 build and its archive left out.
awk -v os="$goos" -v arch="$goarch" '
  /^  - id: linux-hdf5$/ { skip = 1; next }
  /^  - id: / || /^[a-z]/ { skip = 0 }
  skip { next }
  /^    goos: \[/ { print "    goos: [" os "]"; next }
  /^    goarch: \[/ { print "    goarch: [" arch "]"; next }
  { print }' .goreleaser.yaml > "$tmp/goreleaser.yaml"
"${gorel[@]}" release --snapshot --clean --config "$tmp/goreleaser.yaml"
archive=$(ls dist/quarry_*_"${goos}_${goarch}".tar.gz)
mkdir "$tmp/x" && tar -xzf "$archive" -C "$tmp/x"
"$tmp/x/quarry" --version | grep -q -- '-snapshot'
XDG_CACHE_HOME="$tmp/cache" "$tmp/x/quarry" catalog 2>/dev/null | grep -q 'sales/orders'
echo "release-ci: goreleaser check passed; $archive runs"
