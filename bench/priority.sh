#!/usr/bin/env bash
# Priority recalculation (issue 13): one PriorityCalcPeriod pass of the
# controller — usage brought up to now, the fair-share tree (Fair Tree and
# the classic formula), every pending job's factors — over 100,000 pending
# jobs and 10,000 associations. Target: under 200 ms. Not a test: prints
# the figures (wall ms and process CPU ms per pass) and writes
# bench/out/priority.json.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
out=$(go test -run '^$' -bench 'BenchmarkPriorityRecalc' -benchmem -benchtime 10x ./internal/service/ | grep '^BenchmarkPriorityRecalc')
echo "$out" | awk '{ printf "priority recalculation, 100,000 pending jobs, 10,000 associations, %s: %.0f ms (%.0f CPU ms, %.1f MB allocated) per pass\n", substr($1, 25), $3/1e6, $5, $7/1e6 }' | sed 's/-[0-9]*:/:/'
echo "$out" | awk 'BEGIN{printf "{"} {n=substr($1,25); sub(/-[0-9]+$/,"",n); printf "%s\"%s_ms\": %.0f, \"%s_cpu_ms\": %.0f", (NR>1?", ":""), n, $3/1e6, n, $5} END{print "}"}' > bench/out/priority.json
echo "results: bench/out/priority.json"
