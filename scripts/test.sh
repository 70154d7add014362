#!/usr/bin/env bash
# scripts/test.sh TIMEOUT - `make test`'s tests: every package but the
# integration suite, and the integration suite as two processes, all three
# side by side. The suite's tests wait on their MariaDB servers much of the
# time, so two halves of it take about two thirds of the wall time one
# process takes on two cores; each half starts its own servers and proxies.
# Exits non-zero when any of the three fails; each one's output is printed
# whole, one after the other.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
timeout=${1:?usage: scripts/test.sh TIMEOUT}
go=${GO:-go}
# The first half: the red-team, escape, load and promote suites; the second
# half is everything else.
first='^Test(RT|RedTeam|Escape|Load|Promote)'
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mapfile -t pkgs < <("$go" list ./... | grep -v '/integration$')
"$go" test -race -count=1 -timeout "$timeout" "${pkgs[@]}" >"$out/units" 2>&1 &
units=$!
"$go" test -race -count=1 -timeout "$timeout" -run "$first" ./integration/ >"$out/first" 2>&1 &
a=$!
"$go" test -race -count=1 -timeout "$timeout" -skip "$first" ./integration/ >"$out/rest" 2>&1 &
b=$!
rc=0
for p in "units:$units" "first:$a" "rest:$b"; do
	wait "${p#*:}" || rc=1
	cat "$out/${p%%:*}"
done
exit "$rc"
