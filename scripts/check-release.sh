#!/usr/bin/env bash
# Checks a goreleaser dist/ directory: every expected archive exists, and the
# host's cgo-free and HDF5 archives unpack to a quarry that runs (--version,
# then a catalog of the demo data: the HDF5 files listed by the HDF5 build
# and reported as "built without HDF5" by the cgo-free one).
set -euo pipefail
dist=${1:-dist}
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    ext=tar.gz; [ "$os" = windows ] && ext=zip
    ls "$dist"/quarry_*_"${os}_${arch}.${ext}" >/dev/null || { echo "missing ${os}/${arch} archive" >&2; exit 1; }
  done
done
ls "$dist"/quarry_*_linux_amd64_hdf5.tar.gz >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for kind in nocgo hdf5; do
  pattern="$dist/quarry_*_linux_amd64.tar.gz"; [ $kind = hdf5 ] && pattern="$dist/quarry_*_linux_amd64_hdf5.tar.gz"
  mkdir -p "$tmp/$kind" && tar -xzf $pattern -C "$tmp/$kind"
  "$tmp/$kind/quarry" --version
  XDG_CACHE_HOME="$tmp/cache" "$tmp/$kind/quarry" catalog > "$tmp/$kind.txt" 2>/dev/null
  grep -q 'sales/orders' "$tmp/$kind.txt"
done
grep -q 'physics/experiment.h5: this quarry was built without HDF5' "$tmp/nocgo.txt"
grep -q '^physics/experiment' "$tmp/hdf5.txt"
echo "release archives OK"
