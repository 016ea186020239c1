#!/usr/bin/env bash
# What a fresh mount's reads cost, beside the shared bench (../shared/bench): on a copy of the
# bench's template library (made by its offlinefs plug-in), mounted anew each round,
#   ttfb   first 64 KiB of an uncached file: the mount's first read, then a second file's,
#          then the second file again (from the cache), with the bench's ttfb.py;
#   par4   four cold sequential readers (the bench's readseq.py), with the mount's idle RSS
#          and its peak RSS during the reads (VmHWM reset first).
# The page cache is dropped before the first read, as the bench does before it mounts; the
# origin's files are read once first. Not a test: numbers for docs/perf-log.md.
#
#   Benchmarks/fresh-mount-reads.sh ttfb [ROUNDS]     # needs root, the bench's origin running
#   OFFLINEFS=/tmp/ofs-a Benchmarks/fresh-mount-reads.sh par4 3
set -euo pipefail
cd "$(dirname "$0")/.."
. ../shared/bench/config.sh

WORKLOAD=${1:?usage: fresh-mount-reads.sh ttfb|par4 [ROUNDS]}
ROUNDS=${2:-5}
OFFLINEFS=${OFFLINEFS:-$PWD/.build/release/offlinefs}
TEMPLATE="$BENCH_RUNDIR/offlinefs-template"
TOOLS=../shared/bench/tools
LIBRARY=$(mktemp -d /var/tmp/offlinefs-fresh-XXXX)
MOUNTPOINT=$(mktemp -d /tmp/offlinefs-fresh-mnt-XXXX)
trap 'fusermount3 -u "$MOUNTPOINT" 2>/dev/null || true; rm -rf "$LIBRARY" "$MOUNTPOINT"' EXIT
[[ -f "$TEMPLATE/.synced" ]] || { echo "no template: run ../shared/bench/run.sh offlinefs once" >&2; exit 2; }

media() {  # the media file of corpus file $1 (seq0.bin …) in the mount
    local stem="${1%.bin}" f
    for f in "$MOUNTPOINT"/sources/bench/*"[$stem]".*; do
        case "$f" in *.vtt|*.srt|*.jpg|*.nfo) continue ;; esac; echo "$f"; return; done
}

for ((round = 1; round <= ROUNDS; round++)); do
    rm -rf "${LIBRARY:?}"/* && cp -a "$TEMPLATE/." "$LIBRARY/"
    OFFLINEFS_LIBRARY="$LIBRARY" "$OFFLINEFS" mount "$MOUNTPOINT" -f 2>/dev/null &
    pid=$!
    for _ in $(seq 200); do mountpoint -q "$MOUNTPOINT" && break; sleep 0.05; done
    case "$WORKLOAD" in
    ttfb)
        first=$(media big1g.bin) second=$(media seq0.bin)
        sync; echo 3 > /proc/sys/vm/drop_caches
        head -c 1048576 "$BENCH_CORPUS/big1g.bin" > /dev/null; head -c 1048576 "$BENCH_CORPUS/seq0.bin" > /dev/null
        echo "round $round ttfb_ms first $(python3 $TOOLS/ttfb.py "$first" 65536)" \
             "second-file $(python3 $TOOLS/ttfb.py "$second" 65536) cached $(python3 $TOOLS/ttfb.py "$second" 65536)"
        ;;
    par4)
        files=("$(media seq0.bin)" "$(media seq1.bin)" "$(media seq2.bin)" "$(media seq3.bin)")
        sleep 1
        idle=$(awk '/^VmRSS/{print int($2/1024)}' "/proc/$pid/status")
        echo 5 > "/proc/$pid/clear_refs"
        read -r bytes seconds < <(python3 $TOOLS/readseq.py "${files[@]}" | tail -1)
        echo "round $round par4 $(awk -v b="$bytes" -v s="$seconds" 'BEGIN{printf "%.0f", b/s/1e6}') MB/s" \
             "idle_rss ${idle} MiB peak_rss $(awk '/^VmHWM/{print int($2/1024)}' "/proc/$pid/status") MiB"
        ;;
    *) echo "unknown workload $WORKLOAD" >&2; exit 2 ;;
    esac
    fusermount3 -u "$MOUNTPOINT"; wait "$pid" || true
done
