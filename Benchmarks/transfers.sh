#!/usr/bin/env bash
# Transfer benchmark: 8 files of 256 MiB from a local nginx, 4 in flight.
# curl (4 parallel, into files) and the engine (offlinefs-bench transfers) fetch the same
# files into the same disk in the same run; prints MB/s of both, their ratio, and the
# engine's CPU seconds per GiB. Not a test: numbers for a report.
#
#   Benchmarks/transfers.sh            # from the package root; needs root for apt-get/nginx
#   BENCH_DIR=/var/tmp/x COUNT=8 SIZE_MIB=256 PARALLEL=4 Benchmarks/transfers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/var/tmp/offlinefs-bench}
COUNT=${COUNT:-8}
SIZE_MIB=${SIZE_MIB:-256}
PARALLEL=${PARALLEL:-4}
PORT=${PORT:-18080}
ORIGIN="http://127.0.0.1:${PORT}/"

if ! command -v nginx >/dev/null; then
    echo "transfers.sh: installing nginx"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

mkdir -p "$BENCH_DIR/www" "$BENCH_DIR/nginx/logs" "$BENCH_DIR/curl"
for ((i = 0; i < COUNT; i++)); do
    file="$BENCH_DIR/www/file$i.bin"
    if [[ ! -f $file || $(stat -c %s "$file") -ne $((SIZE_MIB << 20)) ]]; then
        head -c "$((SIZE_MIB << 20))" /dev/urandom > "$file"
    fi
done
if [[ ! -f $BENCH_DIR/SHA256SUMS ]] || ! (cd "$BENCH_DIR/www" && sha256sum --quiet -c ../SHA256SUMS 2>/dev/null); then
    (cd "$BENCH_DIR/www" && sha256sum file*.bin > ../SHA256SUMS)
fi

cat > "$BENCH_DIR/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $BENCH_DIR/nginx/nginx.pid;
error_log $BENCH_DIR/nginx/logs/error.log;
events { worker_connections 256; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 10000;
    server {
        listen 127.0.0.1:$PORT;
        root $BENCH_DIR/www;
        location / { etag on; }
    }
}
CONF
"$NGINX" -p "$BENCH_DIR/nginx" -c "$BENCH_DIR/nginx/nginx.conf"
trap '"$NGINX" -p "$BENCH_DIR/nginx" -c "$BENCH_DIR/nginx/nginx.conf" -s stop 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "${ORIGIN}file0.bin" -r 0-0 && break; sleep 0.1; done

echo "building offlinefs-bench (release)"
swift build -c release --product offlinefs-bench >/dev/null
BENCH=.build/release/offlinefs-bench

# Warm the origin's page cache so both clients read the files from memory at the server.
cat "$BENCH_DIR"/www/file*.bin > /dev/null

total_bytes=$((COUNT * (SIZE_MIB << 20)))
rm -f "$BENCH_DIR"/curl/*
sync
start=$(date +%s.%N)
seq 0 $((COUNT - 1)) | xargs -P "$PARALLEL" -I{} curl -sf -o "$BENCH_DIR/curl/file{}.bin" "${ORIGIN}file{}.bin"
mid=$(date +%s.%N)
sync
end=$(date +%s.%N)
curl_s=$(echo "$mid - $start" | bc -l)
curl_sync_s=$(echo "$end - $start" | bc -l)
curl_mbs=$(echo "$total_bytes / $curl_s / 1000000" | bc -l)
curl_sync_mbs=$(echo "$total_bytes / $curl_sync_s / 1000000" | bc -l)
printf 'curl:   %d × %d MiB, %d parallel: %.2f s, %.1f MB/s (%.1f MB/s including a final sync)\n' \
    "$COUNT" "$SIZE_MIB" "$PARALLEL" "$curl_s" "$curl_mbs" "$curl_sync_mbs"
rm -f "$BENCH_DIR"/curl/*
sync

output=$("$BENCH" transfers --origin "$ORIGIN" --library "$BENCH_DIR/library" --count "$COUNT" \
    --size "$((SIZE_MIB << 20))" --parallel "$PARALLEL" --checksums "$BENCH_DIR/SHA256SUMS")
echo "$output"
engine_mbs=$(echo "$output" | sed -n 's/.*s, \([0-9.]*\) MB\/s.*/\1/p')
printf 'ratio engine/curl: %.2f (against curl without sync), %.2f (against curl + sync)\n' \
    "$(echo "$engine_mbs / $curl_mbs" | bc -l)" "$(echo "$engine_mbs / $curl_sync_mbs" | bc -l)"
rm -rf "$BENCH_DIR/library"
