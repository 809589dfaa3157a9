#!/usr/bin/env bash
# Fuzzes every Go fuzz target (func FuzzX(f *testing.F) in a package's test
# files) for FUZZTIME each: `make fuzz-short` (part of `make test`, 2s each)
# and `make fuzz` (20s each; `make fuzz FUZZTIME=10m` for a long run).
# FUZZTIME takes Go's -fuzztime forms: a duration (2s) or a count of
# executions (2000x). FUZZPKGS narrows the packages (go package patterns,
# default ./...). FUZZINSTRUMENT says what gets coverage instrumentation
# (the guidance of the fuzzer): "all" (default, what go test -fuzz does:
# every package in the binary, dependencies included) or "module" (this
# module's packages only: no dependency is rebuilt instrumented, which on
# a cold build cache saves most of the time; make fuzz-short).
#
# Each package's instrumented test binary is built once (go test -c) and
# its targets are run one after the other from the package directory, with
# the go command's fuzz cache, so what `go test -fuzz` would do costs one
# build per package instead of one per target. Every target runs even
# after a failure; the script fails if any target failed. A crasher is
# written to the package's testdata/fuzz/FuzzX/ directory: fix the bug and
# commit the file (plain `go test` then keeps checking it). The command that
# reproduces it is printed.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-2s}
FUZZPKGS=${FUZZPKGS:-./...}
case ${FUZZINSTRUMENT:-all} in
all) instrument=(-fuzz=.) ;;
module) instrument=("-gcflags=$($GO list -m)/...=-d=libfuzzer") ;;
*)
	echo "fuzz: FUZZINSTRUMENT must be all or module, not $FUZZINSTRUMENT" >&2
	exit 2
	;;
esac
root=$PWD
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cache=$($GO env GOCACHE)/fuzz
began=$SECONDS
targets=0
failed=()

# import path, directory and test files of every package (build constraints applied)
# shellcheck disable=SC2086 # FUZZPKGS is a list of patterns
pkgs=$($GO list -f '{{.ImportPath}}|{{.Dir}}|{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' $FUZZPKGS) || exit 1
while IFS='|' read -r pkg dir files; do
	[ -n "${files// /}" ] || continue
	fns=$(cd "$dir" && sed -n -E 's/^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\).*/\1/p' $files | sort -u)
	[ -n "$fns" ] || continue
	rel=./${dir#"$root"/}
	exe=$bin/$(echo "$pkg" | tr / _).test
	t0=$SECONDS
	if ! $GO test -c "${instrument[@]}" -o "$exe" "$rel"; then
		failed+=("$rel: the fuzz build failed")
		continue
	fi
	built=$((SECONDS - t0))
	for fn in $fns; do
		targets=$((targets + 1))
		t0=$SECONDS
		out=$bin/out
		if (cd "$dir" && "$exe" -test.run='^$' -test.fuzz="^$fn\$" -test.fuzztime="$FUZZTIME" \
			-test.fuzzcachedir="$cache/$pkg") >"$out" 2>&1; then
			execs=$(grep -o 'execs: [0-9]*' "$out" | tail -1)
			echo "ok   $rel $fn (${execs:-execs: ?}; $((SECONDS - t0))s; build ${built}s)"
		elif ! grep -q 'Failing input written' "$out" && grep -q -x '    context deadline exceeded' "$out"; then
			# Go's coordinator races the -fuzztime deadline under load and fails
			# the target having found nothing (golang/go#75804, fixed in Go 1.27).
			echo "ok   $rel $fn (no crasher; the -fuzztime shutdown race of golang/go#75804 ignored; $((SECONDS - t0))s)"
		else
			cat "$out"
			input=$(sed -n -E 's|.*Failing input written to (testdata/fuzz/[^ ]*).*|\1|p' "$out" | tail -1)
			echo "FAIL $rel $fn"
			if [ -n "$input" ]; then
				echo "     crasher: $rel/$input (commit it with the fix)"
				echo "     reproduce: go test -run '^$fn\$/^${input##*/}\$' $rel"
			else
				echo "     reproduce: go test -run '^\$' -fuzz '^$fn\$' -fuzztime $FUZZTIME $rel"
			fi
			failed+=("$rel $fn")
		fi
		built=0
	done
done <<<"$pkgs"

echo "fuzz: $targets targets, FUZZTIME=$FUZZTIME, FUZZINSTRUMENT=${FUZZINSTRUMENT:-all}, $((SECONDS - began))s"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: FAILED %s\n' "${failed[@]}"
	exit 1
fi
if [ "$targets" -eq 0 ]; then
	echo "fuzz: no fuzz targets found in $FUZZPKGS"
	exit 1
fi
