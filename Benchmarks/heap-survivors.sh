#!/usr/bin/env bash
# Which call sites hold the heap a running process allocated and did not free: uprobes on
# libc's malloc, calloc, realloc and free for SECONDS, paired by address; the allocations
# made in the first three quarters of the window and still live at its end, summed by call
# stack (frame pointers), largest first, demangled. For finding what a long-running mount
# accumulates (docs/perf-log.md, session 26). Not a test: a report. Needs root and perf.
#
#   Benchmarks/heap-survivors.sh PID [SECONDS]     # default 40 s; prints the top 30 stacks
#
# Every malloc is an event (a busy mount makes ~200,000 a second; pairing 40 s of them takes
# ~4 minutes here, so do not wrap it in a short timeout): keep windows short, and
# compare two windows minutes apart to tell a creep from work in progress. calloc and realloc
# blocks count with size 0 (only malloc's size is recorded).
set -euo pipefail
pid=${1:?usage: heap-survivors.sh PID [SECONDS]}
seconds=${2:-40}
libc=$(awk '$6 ~ /\/libc\.so\.6$/ {print $6; exit}' "/proc/$pid/maps" 2>/dev/null || true)
[ -n "$libc" ] || { echo "heap-survivors: no process $pid, or it maps no libc.so.6" >&2; exit 1; }
data=$(mktemp /var/tmp/heap-survivors.XXXXXX)
cleanup() { perf probe -q -d 'probe_libc:hs_*' 2>/dev/null || true; rm -f "$data"; }
trap cleanup EXIT

perf probe -q -x "$libc" -a 'hs_malloc=malloc size=%di:u64'
perf probe -q -x "$libc" -a 'hs_malloc_ret=malloc%return $retval'
perf probe -q -x "$libc" -a 'hs_calloc_ret=calloc%return $retval'
perf probe -q -x "$libc" -a 'hs_realloc=realloc ptr=%di:u64'
perf probe -q -x "$libc" -a 'hs_realloc_ret=realloc%return $retval'
perf probe -q -x "$libc" -a 'hs_free=free ptr=%di:u64'
perf record -q -o "$data" -e 'probe_libc:hs_*' --call-graph fp -p "$pid" -- sleep "$seconds" 2>/dev/null

perf script -i "$data" -F tid,time,event,trace,ip,sym 2>/dev/null | python3 -c '
import collections, re, sys
header = re.compile(r"^\s*(\d+)\s+(\d+\.\d+):\s+probe_libc:(\w+):.*?(?:(?:size|ptr)=(\d+)|arg1=(0x[0-9a-f]+))?\s*$")
live, sizes, stack, current, first, events = {}, {}, [], None, None, 0
def settle():
    if current is None: return
    tid, time, event, value = current
    if event == "hs_malloc": sizes[tid] = value
    elif event == "hs_malloc_ret__return" and value: live[value] = (sizes.pop(tid, 0), time, tuple(stack[:10]))
    elif event in ("hs_calloc_ret__return", "hs_realloc_ret__return") and value: live.setdefault(value, (0, time, tuple(stack[:10])))
    elif event in ("hs_realloc", "hs_free") and value: live.pop(value, None)
for line in sys.stdin:
    if line.startswith("\t"):
        parts = line.split()
        if len(parts) >= 2: stack.append(parts[1])
        continue
    match = header.match(line)
    if not match: continue
    settle(); stack = []; events += 1
    tid, time, event = int(match[1]), float(match[2]), match[3]
    value = int(match[4]) if match[4] else (int(match[5], 16) if match[5] else 0)
    first = first if first is not None else time
    current = (tid, time, event, value)
settle()
last = max((v[1] for v in live.values()), default=first or 0)
cut = (first or 0) + (last - (first or 0)) * 0.75
skip = ("malloc", "calloc", "realloc", "swift_slowAlloc", "swift_allocObject", "[unknown]")
totals = collections.defaultdict(lambda: [0, 0])
for size, time, frames in live.values():
    if time > cut: continue
    key = " < ".join(f for f in frames if not f.startswith(skip))[:600] or "(no frames)"
    totals[key][0] += size; totals[key][1] += 1
print(f"{events} events; live at the end and older than a quarter of the window:", sum(c for _, c in totals.values()))
for key, (size, count) in sorted(totals.items(), key=lambda kv: -kv[1][0])[:30]:
    print(f"{size:>10} B {count:>7} x  {key}")
' | swift demangle --simplified
