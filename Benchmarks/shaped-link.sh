#!/usr/bin/env bash
# A real link's round trips: the mount beside the same program on the origin URL, through
# ../shared/bench/tools/shaper.py (a loopback proxy adding delay and capping the rate),
# 40 ms round trips and 100 Mbit/s by default. Workloads, each on an item not yet cached:
#   first 64 KiB          head -c 65536 FILE        | curl -r 0-65535 URL
#   ffmpeg -ss to 25/50/75 % of a video, one frame  | the same ffmpeg on the URL
#   full sequential read  cat FILE                  | curl URL
#   first read after a listing: ls -l of the folder, then head -c 65536 of an item | curl -r
# Prints a table of seconds and of the requests and new connections the origin (nginx)
# logged as started during each run. Not a test: numbers for a report.
#
#   Benchmarks/shaped-link.sh          # from the package root; needs root for apt-get/nginx
#   DELAY_MS=20 RATE_MBIT=100 BIG_MIB=64 BENCH_DIR=/var/tmp/x Benchmarks/shaped-link.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/var/tmp/offlinefs-shaped}
DELAY_MS=${DELAY_MS:-20}          # one way: a round trip is twice this
RATE_MBIT=${RATE_MBIT:-100}
BIG_MIB=${BIG_MIB:-64}
ORIGIN_PORT=${ORIGIN_PORT:-18090}
LINK_PORT=${LINK_PORT:-18091}
SHAPER=${SHAPER:-../shared/bench/tools/shaper.py}
LINK="http://127.0.0.1:${LINK_PORT}"

for tool in nginx ffmpeg ffprobe curl; do
    if ! command -v "$tool" >/dev/null && [[ ! -x /usr/sbin/$tool ]]; then
        echo "shaped-link.sh: installing $tool"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$([[ $tool == ff* ]] && echo ffmpeg || echo "$tool")" >/dev/null
    fi
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -f $SHAPER ]] || { echo "shaped-link.sh: no shaper at $SHAPER (set SHAPER)"; exit 1; }

echo "building offlinefs (release)"
swift build -c release --product offlinefs >/dev/null
OFFLINEFS=$PWD/.build/release/offlinefs

mkdir -p "$BENCH_DIR/www" "$BENCH_DIR/nginx/logs"
www=$BENCH_DIR/www
# A 2-minute H.264 video (moov first, a key frame every 2 s, as web videos are), a big file,
# and small files for the first reads: one per run, so each run reads an item not yet cached.
if [[ ! -f $www/video.mp4 ]]; then
    ffmpeg -v error -f lavfi -i testsrc2=size=1280x720:rate=25 -t 120 -c:v libx264 -preset ultrafast \
        -g 50 -b:v 4M -movflags +faststart "$www/video.mp4"
fi
for name in big-mount big-url; do
    [[ -f $www/$name.bin && $(stat -c %s "$www/$name.bin") -eq $((BIG_MIB << 20)) ]] ||
        head -c "$((BIG_MIB << 20))" /dev/urandom > "$www/$name.bin"
done
for i in 1 2 3 4; do
    [[ -f $www/small-$i.bin ]] || head -c $((4 << 20)) /dev/urandom > "$www/small-$i.bin"
done
for seek in 25 50 75; do cp -n "$www/video.mp4" "$www/video-$seek.mp4"; done

item() {  # id file type mime
    printf '{"id": "%s", "title": "%s", "type": "%s", "mimeType": "%s", "url": "%s/%s", "size": %d}' \
        "$1" "$1" "$3" "$4" "$LINK" "$2" "$(stat -c %s "$www/$2")"
}
{
    printf '{"offlinefs": 1, "source": {"title": "Shaped"}, "items": [\n'
    item big big-mount.bin file application/octet-stream; printf ',\n'
    for seek in 25 50 75; do item "video-$seek" "video-$seek.mp4" video video/mp4; printf ',\n'; done
    for i in 1 2 3; do item "small-$i" "small-$i.bin" file application/octet-stream; printf ',\n'; done
    item small-4 small-4.bin file application/octet-stream
    printf '\n]}\n'
} > "$www/catalog.json"

cat > "$BENCH_DIR/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $BENCH_DIR/nginx/nginx.pid;
error_log $BENCH_DIR/nginx/logs/error.log;
events { worker_connections 256; }
http {
    # end of the request (s since 1970), its duration, the connection, its request count, the
    # request, its status, the range asked and the body bytes sent
    log_format timed '\$msec \$request_time \$connection \$connection_requests "\$request" \$status "\$http_range" \$body_bytes_sent';
    access_log $BENCH_DIR/nginx/logs/access.log timed;
    sendfile on;
    keepalive_requests 10000;
    types { video/mp4 mp4; application/json json; }
    default_type application/octet-stream;
    server { listen 127.0.0.1:$ORIGIN_PORT; root $www; location / { etag on; } }
}
CONF
: > "$BENCH_DIR/nginx/logs/access.log"
"$NGINX" -p "$BENCH_DIR/nginx" -c "$BENCH_DIR/nginx/nginx.conf"
python3 "$SHAPER" "$LINK_PORT" "$ORIGIN_PORT" --delay-ms "$DELAY_MS" --rate-mbit "$RATE_MBIT" &
shaper_pid=$!
mnt=$BENCH_DIR/mnt
library=$BENCH_DIR/library
cleanup() {
    "$OFFLINEFS" unmount "$mnt" 2>/dev/null || true
    kill "$shaper_pid" 2>/dev/null || true
    "$NGINX" -p "$BENCH_DIR/nginx" -c "$BENCH_DIR/nginx/nginx.conf" -s stop 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "$LINK/catalog.json" && break; sleep 0.1; done

rm -rf "$library"; mkdir -p "$mnt"
"$OFFLINEFS" source add --library "$library" shaped "$LINK/catalog.json" >/dev/null
"$OFFLINEFS" sync --library "$library" >/dev/null
"$OFFLINEFS" mount --library "$library" "$mnt"
folder=$mnt/sources/shaped
file() { echo "$folder/$1 [$1].$2"; }
stat "$(file big bin)" >/dev/null

now() { date +%s.%N; }
# Requests that started in [$1, $2] (nginx logs the end and the duration), and how many of
# them opened a connection.
requests() {
    awk -v a="$1" -v b="$2" '{ start = $1 - $2 } start >= a - 0.001 && start <= b { n++; if ($4 == 1) c++ }
        END { printf "%d %d", n, c }' "$BENCH_DIR/nginx/logs/access.log"
}
rows=()
run() {  # label mount-command url-command
    local t0 t1 t2 t3
    sleep 0.2  # a quiet link between runs: the previous run's requests are logged
    t0=$(now); bash -c "$2" >/dev/null 2>&1; t1=$(now)
    sleep 0.5  # what the mount still fetched after the command ended is logged too
    local mount_reqs; mount_reqs=$(requests "$t0" "$t1")
    t2=$(now); bash -c "$3" >/dev/null 2>&1; t3=$(now)
    sleep 0.5
    local url_reqs; url_reqs=$(requests "$t2" "$t3")
    rows+=("$(awk -v l="$1" -v m="$(echo "$t1 - $t0" | bc -l)" -v u="$(echo "$t3 - $t2" | bc -l)" \
        -v mr="$mount_reqs" -v ur="$url_reqs" 'BEGIN { split(mr, a, " "); split(ur, b, " ");
        printf "| %s | %.3f | %.3f | %.2f | %d | %d | %d | %d |", l, m, u, m / u, a[1], b[1], a[2], b[2] }')")
}

duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$www/video.mp4")
run "first 64 KiB" "head -c 65536 '$(file small-3 bin)'" "curl -sf -r 0-65535 -o /dev/null '$LINK/small-4.bin'"
for seek in 25 50 75; do
    at=$(echo "$duration * $seek / 100" | bc -l)
    run "ffmpeg -ss $seek %" "ffmpeg -v error -ss $at -i '$(file "video-$seek" mp4)' -frames:v 1 -f null -" \
        "ffmpeg -v error -ss $at -i '$LINK/video.mp4' -frames:v 1 -f null -"
done
run "full read ${BIG_MIB} MiB" "cat '$(file big bin)'" "curl -sf -o /dev/null '$LINK/big-url.bin'"
run "read after listing" "ls -l '$folder' && head -c 65536 '$(file small-1 bin)'" \
    "curl -sf -r 0-65535 -o /dev/null '$LINK/small-2.bin'"

echo "round trip $((2 * DELAY_MS)) ms, ${RATE_MBIT} Mbit/s; requests and new connections as the origin logged them"
echo "| workload | mount s | URL s | mount/URL | mount requests | URL requests | mount connections | URL connections |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
