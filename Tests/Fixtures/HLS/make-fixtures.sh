#!/usr/bin/env bash
# Regenerates the real HLS fixtures the HLS parser tests read (Tests/OfflineFeedsTests/
# HLSParserTests.swift), with ffmpeg (apt-get install ffmpeg). The output is committed, so
# the tests never need ffmpeg; rerun this only to change the fixtures:
#
#     Tests/Fixtures/HLS/make-fixtures.sh
#
# It makes, next to this script:
#   ts/    MPEG-TS, two variants written by ffmpeg's own master playlist: master.m3u8,
#          low/index.m3u8 (160x90, ~100 kbit/s) and high/index.m3u8 (320x180, ~300 kbit/s);
#          6 s of testsrc + sine, 1 s segments, VOD.
#   fmp4/  one fMP4 variant (init.mp4 + .m4s segments): index.m3u8 and a master.m3u8, 4 s.
#   aes/   AES-128 MPEG-TS, 4 s: index.m3u8 whose key URI is the relative "key.bin",
#          key.bin (bytes 00 01 … 0f) and a fixed IV (key.info is the ffmpeg key info file).
#   alt/   alternate renditions, 4 s: master.m3u8 whose variant (video/, video only) names an
#          audio group (audio/, the sound, DEFAULT=YES) and a subtitles group
#          (video/index_vtt.m3u8, WebVTT segments from subtitles.vtt).
# The hand-written playlists in hostile/ and rfc/ are not touched.
#
# Everything is synthetic, tiny and bitexact, so a rerun with the same ffmpeg gives the same
# bytes (ffmpeg 5.1 on Debian 12 made the committed files).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf ts fmp4 aes alt
mkdir -p ts fmp4 aes alt

ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }
# Reproducible output: no encoder strings or creation times in the files.
bitexact=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact)
# A keyframe every second (24 fps) so every 1 s segment starts on one.
h264=(-c:v libx264 -preset veryfast -profile:v main -pix_fmt yuv420p -threads 1
      -g 24 -keyint_min 24 -sc_threshold 0 -x264-params scenecut=0)
aac=(-c:a aac -b:a 32k -ac 1 -ar 44100)
source=(-f lavfi -i "testsrc=size=320x180:rate=24" -f lavfi -i "sine=frequency=440:sample_rate=44100")

# ts/: two variants from one input, ffmpeg writes master.m3u8 with BANDWIDTH, RESOLUTION, CODECS.
ff "${source[@]}" -t 6 \
    -filter_complex "[0:v]split=2[a][b];[a]scale=160:90[low];[b]copy[high]" \
    -map "[low]" -map 1:a -map "[high]" -map 1:a \
    "${h264[@]}" -b:v:0 100k -maxrate:v:0 100k -bufsize:v:0 100k \
    -b:v:1 300k -maxrate:v:1 300k -bufsize:v:1 300k "${aac[@]}" "${bitexact[@]}" \
    -f hls -hls_time 1 -hls_playlist_type vod \
    -var_stream_map "v:0,a:0,name:low v:1,a:1,name:high" -master_pl_name master.m3u8 \
    -hls_segment_filename "ts/%v/segment-%02d.ts" "ts/%v/index.m3u8"

# fmp4/: one fMP4 variant and a master playlist pointing to it.
ff "${source[@]}" -t 4 -vf scale=160:90 \
    "${h264[@]}" -b:v 100k -maxrate 100k -bufsize 100k "${aac[@]}" "${bitexact[@]}" \
    -f hls -hls_time 1 -hls_playlist_type vod -hls_segment_type fmp4 \
    -hls_fmp4_init_filename init.mp4 -master_pl_name master.m3u8 \
    -hls_segment_filename "fmp4/segment-%02d.m4s" fmp4/index.m3u8

# aes/: AES-128 with a fixed key and IV. The key info file is: key URI (written into the
# playlist as is), key file path (read by ffmpeg), IV.
printf '%b' '\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f' > aes/key.bin
printf 'key.bin\naes/key.bin\n00112233445566778899aabbccddeeff\n' > aes/key.info
ff "${source[@]}" -t 4 -vf scale=160:90 \
    "${h264[@]}" -b:v 100k -maxrate 100k -bufsize 100k "${aac[@]}" "${bitexact[@]}" \
    -f hls -hls_time 1 -hls_playlist_type vod -hls_key_info_file aes/key.info \
    -hls_segment_filename "aes/segment-%02d.ts" aes/index.m3u8

# alt/: the variant's segments hold only video; its audio and subtitles are renditions.
printf 'WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello\n\n00:00:02.000 --> 00:00:04.000\nWorld\n' > alt/subtitles.vtt
ff "${source[@]}" -i alt/subtitles.vtt -t 4 -map 0:v -map 1:a -map 2:s -vf scale=160:90 \
    "${h264[@]}" -b:v 100k -maxrate 100k -bufsize 100k "${aac[@]}" -c:s webvtt "${bitexact[@]}" \
    -f hls -hls_time 1 -hls_playlist_type vod -master_pl_name master.m3u8 \
    -var_stream_map "v:0,s:0,agroup:sound,sgroup:subs,name:video a:0,agroup:sound,default:yes,language:en,name:audio" \
    -hls_segment_filename "alt/%v/segment-%02d.ts" "alt/%v/index.m3u8"

du -sh ts fmp4 aes alt
find ts fmp4 aes alt -type f -printf '%8s  %p\n' | sort -k2
