#!/usr/bin/env bash
# Regenerates the demo's sample media in Demo/Media with ffmpeg (apt-get install ffmpeg).
# The files are committed, so building offlinefs never needs ffmpeg; run this only to change
# them, then update DemoCatalog.swift (sizes are read at run time, checksums are not kept).
#
# Everything is synthetic (test patterns and tones), a few seconds long and low resolution:
# the whole folder stays well under 2 MB.
set -euo pipefail
cd "$(dirname "$0")"
out=Media
rm -rf "$out"
mkdir -p "$out/acme" "$out/acme/thumbs" "$out/acme/subs" "$out/owls" "$out/acme/hls"

ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }
# Reproducible output: no encoder strings or creation times in the files.
bitexact=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact)
h264=(-c:v libx264 -preset veryslow -profile:v main -pix_fmt yuv420p -threads 1 -x264-params keyint=48:min-keyint=48:scenecut=0)
aac=(-c:a aac -b:a 48k -ac 1 -ar 44100)

# video <file> <seconds> <lavfi video source> <tone Hz>
video() {
    ff -f lavfi -i "$3" -f lavfi -i "sine=frequency=$4:sample_rate=44100" -t "$2" \
        "${h264[@]}" -crf 34 "${aac[@]}" -movflags +faststart "${bitexact[@]}" "$out/acme/$1"
}
video launch-day.mp4   6 "testsrc=size=320x180:rate=24"                 440
video city-council.mp4 5 "smptebars=size=320x180:rate=24"               330
video picnic.mp4       5 "testsrc2=size=320x180:rate=24"                550
video premiere.mp4     6 "mandelbrot=size=320x180:rate=24:end_pts=200" 220

# One JPEG thumbnail per video: the frame at 1 s.
for name in launch-day city-council picnic premiere; do
    ff -ss 1 -i "$out/acme/$name.mp4" -frames:v 1 -q:v 6 "${bitexact[@]}" "$out/acme/thumbs/$name.jpg"
done

# Podcast episodes: a few seconds of tones, MP3 64 kb/s mono.
audio() {
    ff -f lavfi -i "$2" -t "$3" -c:a libmp3lame -b:a 64k -ac 1 -ar 44100 "${bitexact[@]}" -write_xing 0 "$out/owls/$1"
}
audio owls-at-dusk.mp3 "sine=frequency=300:beep_factor=2:sample_rate=44100" 8
audio bats.mp3         "sine=frequency=880:beep_factor=4:sample_rate=44100" 6
# The podcast's cover (itunes:image), square as podcast apps expect.
ff -f lavfi -i "mandelbrot=size=300x300:start_scale=1.5" -frames:v 1 -q:v 6 "${bitexact[@]}" "$out/owls/cover.jpg"

# HLS: one 10 s stream in two variants (320x180 and 640x360), MPEG-TS segments of 2 s.
variant() {
    mkdir -p "$out/acme/hls/$1"
    ff -f lavfi -i "testsrc2=size=$2:rate=24" -f lavfi -i "sine=frequency=660:sample_rate=44100" -t 10 \
        "${h264[@]}" -b:v "$3" -maxrate "$3" -bufsize "$3" "${aac[@]}" "${bitexact[@]}" \
        -f hls -hls_time 2 -hls_playlist_type vod -hls_flags independent_segments \
        -hls_segment_filename "$out/acme/hls/$1/segment-%02d.ts" "$out/acme/hls/$1/index.m3u8"
}
variant 180p 320x180 150k
variant 360p 640x360 400k
cat > "$out/acme/hls/master.m3u8" <<'M3U8'
#EXTM3U
#EXT-X-VERSION:6
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-STREAM-INF:BANDWIDTH=260000,AVERAGE-BANDWIDTH=240000,RESOLUTION=320x180,CODECS="avc1.4d4015,mp4a.40.2"
180p/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=530000,AVERAGE-BANDWIDTH=500000,RESOLUTION=640x360,CODECS="avc1.4d401f,mp4a.40.2"
360p/index.m3u8
M3U8

# Subtitles (WebVTT) for Launch Day, in English and French.
cat > "$out/acme/subs/launch-day.en.vtt" <<'VTT'
WEBVTT

00:00:00.000 --> 00:00:02.000
This is Launch Day, the first Acme video.

00:00:02.000 --> 00:00:04.000
Everything here comes from a local test origin.

00:00:04.000 --> 00:00:06.000
Press Ctrl-C in the demo's terminal to unmount.
VTT
cat > "$out/acme/subs/launch-day.fr.vtt" <<'VTT'
WEBVTT

00:00:00.000 --> 00:00:02.000
Voici Launch Day, la première vidéo d'Acme.

00:00:02.000 --> 00:00:04.000
Tout vient d'une origine de test locale.

00:00:04.000 --> 00:00:06.000
Ctrl-C dans le terminal de la démo démonte.
VTT

du -sh "$out"
find "$out" -type f -printf '%8s  %p\n' | sort -k2
