#!/usr/bin/env bash
# Fuzzes every Go fuzz target (func FuzzX(f *testing.F) in a package's test
# files) for FUZZTIME each: `make fuzz-short` (part of `make test`, 2s each)
# and `make fuzz` (20s each; `make fuzz FUZZTIME=10m` for a long run).
# FUZZTIME takes Go's -fuzztime forms: a duration (2s) or a count of
# executions (2000x). FUZZPKGS narrows the packages (go package patterns,
# default ./...). FUZZINSTRUMENT says what gets coverage instrumentation
# (the guidance of the fuzzer): "all" (default, what go test -fuzz does:
# every package in the binary, dependencies included), "module" (this
# module's packages only: no dependency is rebuilt instrumented) or
# "package" (only the package whose targets run, where its parsers live:
# every other package comes from the build cache that go vet and go build
# fill, so a package's fuzz build costs what its plain test build does;
# make fuzz-short).
#
# Each package's test binary is built once (go test -c; with "package",
# FUZZJOBS builds at a time) and its targets are run from the package
# directory with the go command's fuzz cache, so what `go test -fuzz`
# would do costs one build per package instead of one per target.
# FUZZJOBS targets run at a time (default 1), each with nproc/FUZZJOBS fuzz
# workers (at least 1): on a small machine FUZZJOBS=$(nproc) keeps every
# core busy through each target's start-up and shutdown. Every target runs
# even after a failure; the script fails if any target failed. A crasher is
# written to the package's testdata/fuzz/FuzzX/ directory: fix the bug and
# commit the file (plain `go test` then keeps checking it). The command that
# reproduces it is printed.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-2s}
FUZZPKGS=${FUZZPKGS:-./...}
FUZZINSTRUMENT=${FUZZINSTRUMENT:-all}
FUZZJOBS=${FUZZJOBS:-1}
cores=$(nproc 2>/dev/null || echo 1)
workers=$((cores / FUZZJOBS))
[ "$workers" -ge 1 ] || workers=1
buildjobs=1
case $FUZZINSTRUMENT in
all) instrument() { echo -fuzz=.; } ;;
module)
	mod=$($GO list -m) || exit 1
	instrument() { echo "-gcflags=$mod/...=-d=libfuzzer"; }
	;;
package)
	# Nothing instrumented is shared between packages: build them side by side.
	instrument() { echo "-gcflags=$1=-d=libfuzzer"; }
	buildjobs=$cores
	;;
*)
	echo "fuzz: FUZZINSTRUMENT must be all, module or package, not $FUZZINSTRUMENT" >&2
	exit 2
	;;
esac
root=$PWD
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cache=$($GO env GOCACHE)/fuzz
began=$SECONDS

# pool N CMD...: runs CMD in the background, at most N at a time.
pool() {
	local n=$1
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do
		wait -n
	done
	"$@" &
}

# build PKG REL EXE: the package's test binary (EXE.built holds the
# seconds it took), or EXE.log and no EXE.built.
build() {
	local t0=$SECONDS
	# -s -w: no symbol table or DWARF (stack traces do not need them), a faster link.
	# shellcheck disable=SC2046 # one flag, no spaces
	if $GO test -c $(instrument "$1") -ldflags='-s -w' -o "$3" "$2" >"$3.log" 2>&1 </dev/null; then
		echo "$((SECONDS - t0))" >"$3.built"
	fi
}

# fuzz N REL DIR EXE FN PKG: runs one target; its report goes to $bin/N.report,
# a failure leaves $bin/N.failed.
fuzz() {
	local n=$1 rel=$2 dir=$3 exe=$4 fn=$5 pkg=$6 t0=$SECONDS
	local out=$bin/$n.out report=$bin/$n.report
	if (cd "$dir" && "$exe" -test.run='^$' -test.fuzz="^$fn\$" -test.fuzztime="$FUZZTIME" \
		-test.parallel="$workers" -test.fuzzcachedir="$cache/$pkg") >"$out" 2>&1 </dev/null; then
		local execs
		execs=$(grep -o 'execs: [0-9]*' "$out" | tail -1)
		echo "ok   $rel $fn (${execs:-execs: ?}; $((SECONDS - t0))s)" >"$report"
	elif ! grep -q 'Failing input written' "$out" && grep -q -x '    context deadline exceeded' "$out"; then
		# Go's coordinator races the -fuzztime deadline under load and fails
		# the target having found nothing (golang/go#75804, fixed in Go 1.27).
		echo "ok   $rel $fn (no crasher; the -fuzztime shutdown race of golang/go#75804 ignored; $((SECONDS - t0))s)" >"$report"
	else
		local input
		input=$(sed -n -E 's|.*Failing input written to (testdata/fuzz/[^ ]*).*|\1|p' "$out" | tail -1)
		{
			cat "$out"
			echo "FAIL $rel $fn"
			if [ -n "$input" ]; then
				echo "     crasher: $rel/$input (commit it with the fix)"
				echo "     reproduce: go test -run '^$fn\$/^${input##*/}\$' $rel"
			else
				echo "     reproduce: go test -run '^\$' -fuzz '^$fn\$' -fuzztime $FUZZTIME $rel"
			fi
		} >"$report"
		echo "$rel $fn" >"$bin/$n.failed"
	fi
	cat "$report"
}

# import path, directory and test files of every package (build constraints applied)
# shellcheck disable=SC2086 # FUZZPKGS is a list of patterns
pkgs=$($GO list -f '{{.ImportPath}}|{{.Dir}}|{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' $FUZZPKGS) || exit 1
targets=() # "rel|dir|exe|fn|pkg"
while IFS='|' read -r pkg dir files; do
	[ -n "${files// /}" ] || continue
	# shellcheck disable=SC2086 # files is a list
	fns=$(cd "$dir" && sed -n -E 's/^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\).*/\1/p' $files | sort -u)
	[ -n "$fns" ] || continue
	rel=./${dir#"$root"/}
	exe=$bin/$(echo "$pkg" | tr / _).test
	pool "$buildjobs" build "$pkg" "$rel" "$exe"
	for fn in $fns; do
		targets+=("$rel|$dir|$exe|$fn|$pkg")
	done
done <<<"$pkgs"
wait
failed=()
declare -A reported
for t in "${targets[@]}"; do
	IFS='|' read -r rel _ exe _ _ <<<"$t"
	[ -z "${reported[$exe]:-}" ] || continue
	reported[$exe]=1
	if [ -e "$exe.built" ]; then
		echo "built $rel ($(cat "$exe.built")s)"
	else
		cat "$exe.log"
		failed+=("$rel: the fuzz build failed")
	fi
done
echo "fuzz: built in $((SECONDS - began))s; running ${#targets[@]} targets, $FUZZJOBS at a time, $workers workers each"

n=0
for t in "${targets[@]}"; do
	IFS='|' read -r rel dir exe fn pkg <<<"$t"
	n=$((n + 1))
	[ -e "$exe.built" ] || continue
	pool "$FUZZJOBS" fuzz "$n" "$rel" "$dir" "$exe" "$fn" "$pkg"
done
wait
for f in "$bin"/*.failed; do
	[ ! -e "$f" ] || failed+=("$(cat "$f")")
done

echo "fuzz: ${#targets[@]} targets, FUZZTIME=$FUZZTIME, FUZZINSTRUMENT=$FUZZINSTRUMENT, FUZZJOBS=$FUZZJOBS, $((SECONDS - began))s"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: FAILED %s\n' "${failed[@]}"
	exit 1
fi
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz: no fuzz targets found in $FUZZPKGS"
	exit 1
fi
