#!/usr/bin/env bash
# Replays every input of an HTTP corpus through the `http` fuzz harness (the daemon's own
# connection setup on an in-memory channel) and prints what the server answered, in corpus
# order, with the harness's clock readings masked: two builds of the server answer alike when
# their outputs are the same bytes. For a change to the server that must not change the wire:
#   bash scripts/http-replay.sh OLD-geoattr-fuzz .fuzz/corpus/http > old.txt
#   bash scripts/http-replay.sh .build-fuzz/release/geoattr-fuzz .fuzz/corpus/http > new.txt
#   cmp old.txt new.txt
# The binary is the one scripts/fuzz.sh builds (.build-fuzz/release/geoattr-fuzz); the corpus,
# one that a fuzzing run grew (.fuzz/corpus/http) or Fuzz/seeds/http.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: http-replay.sh GEOATTR-FUZZ-BINARY CORPUS-DIR" >&2; exit 64; }
binary=$(readlink -f "$1")
cd "$2"
# One process for the whole corpus (libFuzzer runs each named input once); its output unbuffered
# so that each answer lands between the lines that name its input, and without libFuzzer's
# timeout, whose alarm every second interrupts a write to the pipe (glibc then writes part of
# an answer twice).
env -i PATH="$PATH" SWIFT_DETERMINISTIC_HASHING=1 SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
    GEOATTR_FUZZ_TARGET=http GEOATTR_FUZZ_VERBOSE=1 stdbuf -o0 "$binary" -timeout=0 $(ls) 2>&1 </dev/null |
    sed -E '/^INFO: (Seed|Loaded)/d; s#^.*: Running ([0-9]+) inputs#Running \1 inputs#;
        s/Executed (.*) in [0-9]+ ms/Executed \1/; s/20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/TIME/g;
        s/_timestamp_seconds [0-9.e+]+/_timestamp_seconds T/g; s/^(geoattrd_cache_age_seconds) .*/\1 AGE/;
        s/"age_s":[0-9]+/"age_s":AGE/g'
