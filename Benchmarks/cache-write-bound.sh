#!/usr/bin/env bash
# What a cold read that fills the cache can reach on this machine, without FUSE: the shared
# bench's origin file fetched by curl into /dev/null (its `curl` row), and by curl into a file
# on the cache's disk (the least a cache-filling read does: receive, then write to the page
# cache). Prints MB/s of each, median of RUNS, and their ratio. Not a test: numbers for a report.
#
# The bench's seq_cold target is 0.8 x min(curl, fuselimit); a mount whose cold reads fill
# its cache pays at least the second figure's work per byte, plus FUSE's.
#
#   ../shared/bench/origin.sh start                        # the bench's nginx origin first
#   Benchmarks/cache-write-bound.sh                       # from the package root
#   URL=http://127.0.0.1:18080/seq0.bin DIR=/var/tmp RUNS=5 Benchmarks/cache-write-bound.sh
set -euo pipefail

URL=${URL:-http://127.0.0.1:18080/seq0.bin}
DIR=${DIR:-${OFFLINEFS_LIBRARY:-$HOME/.local/share/offlinefs}}
RUNS=${RUNS:-5}
mkdir -p "$DIR"
target="$DIR/cache-write-bound.$$"
trap 'rm -f "$target"' EXIT

curl -s -f -o /dev/null "$URL" || { echo "cache-write-bound.sh: $URL does not answer (start the origin)" >&2; exit 1; }

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
sample() {  # curl output file -> MB/s
    rm -f "$target"
    curl -s -f -o "$1" -w '%{speed_download}\n' "$URL" | awk '{printf "%.0f\n", $1 / 1e6}'
}

to_null=$(for ((i = 0; i < RUNS; i++)); do sample /dev/null; done | median)
to_file=$(for ((i = 0; i < RUNS; i++)); do sample "$target"; sync; done | median)
echo "curl to /dev/null      $to_null MB/s"
echo "curl into a file       $to_file MB/s   (on $(df --output=source "$DIR" | tail -1))"
awk -v a="$to_file" -v b="$to_null" 'BEGIN {printf "file / null            %.2f\n", a / b}'
