#!/usr/bin/env bash
# Runs make targets one after the other, as `make test` does with its steps,
# and prints each step's wall and CPU seconds (user + system of everything
# the step ran) when it ends, then every step's figures again on one line
# each, so that a CI log shows where make test's time went
# (docs/RELIABILITY.md, "Make test's time"). It stops at the first step
# that fails. MAKE and the command line's variables come from the calling
# make (MAKEFLAGS is in the environment).
set -uo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
summary=()
began=$SECONDS
report() {
	printf '%s\n' "${summary[@]}"
	echo "make test: $((SECONDS - began)) s wall in all"
}
for step in "$@"; do
	out=$(mktemp)
	# The step's own output goes to the terminal (fd 3); only time's
	# report goes to $out.
	TIMEFORMAT="make test: $step %0R s wall, %0U s user + %0S s sys CPU"
	{ time "$make" --no-print-directory "$step" 2>&3; } 3>&2 2>"$out"
	rc=$?
	line=$(tail -1 "$out")
	rm -f "$out"
	echo "$line"
	summary+=("$line")
	if [ "$rc" -ne 0 ]; then
		echo "make test: $step failed (exit $rc)"
		report
		exit "$rc"
	fi
done
report
