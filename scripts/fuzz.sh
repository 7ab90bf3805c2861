#!/usr/bin/env bash
# libFuzzer runs of the harnesses in Fuzz/geoattr-fuzz (RELIABILITY.md, "Fuzzing"):
#
#   bash scripts/fuzz.sh [TARGET|all] [SECONDS]
#   bash scripts/fuzz.sh build      the instrumented binary alone
#
# TARGET: http (the API's request handling in memory), http-socket (the API server end to end
# on a Unix socket), index (the index reader), index-arrow (the back office's C interface over
# it; both also cut the file short after the open), config (the configuration loader), cache (the
# cache file), state (the state file).
#
# Builds the instrumented binary once (release, -sanitize=fuzzer,address, scratch path
# .build-fuzz), makes each target's corpus in .fuzz/corpus/TARGET from the committed seeds
# (Fuzz/seeds/TARGET) and generated ones (a fixture index, cache files written by CacheFile),
# runs the targets one after the other on one job for SECONDS each (default 60), prints the
# executions and crashes of each, and exits 1 if any run found a crash, a hang or a leak (the
# input is kept in .fuzz/artifacts/TARGET/; replay it with
# `GEOATTR_FUZZ_TARGET=TARGET .build-fuzz/release/geoattr-fuzz FILE`).
#
# FUZZ_RUNS=N also stops each run after N executions; FUZZ_FLAGS adds libFuzzer flags;
# FUZZ_NO_BUILD=1 runs the binary already built (long campaigns while the sources change).
# FUZZ_CPU=N pins the runs to core N (taskset): the socket harness's client and the server's event
# loops then wake each other on one core, which doubles its speed on a VM (cross-core wake-ups
# cost an interrupt each); two campaigns on two cores do not slow each other down.
# The corpora grow from run to run; delete .fuzz/corpus to start from the seeds again.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(http http-socket index index-arrow config cache state)
which=${1:-all}
seconds=${2:-60}
if [[ $which == all ]]; then
    targets=("${all[@]}")
elif [[ $which == build ]]; then
    targets=()
elif [[ " ${all[*]} " == *" $which "* ]]; then
    targets=("$which")
else
    echo "usage: $0 [all|build|${all[*]// /|}] [SECONDS]" >&2
    exit 64
fi

scratch=.build-fuzz
binary=$scratch/release/geoattr-fuzz
mkdir -p "$scratch" .fuzz

# ld.gold cannot link the sanitizer runtimes with Swift objects ("internal error in
# format_file_lineno"): the toolchain's lld can, through a toolset file.
lld=$(dirname "$(readlink -f "$(command -v swift)")")/ld.lld
[[ -x $lld ]] || lld=$(command -v ld.lld || true)
if [[ -z $lld ]]; then
    echo "fuzz: ld.lld not found beside swift or on PATH" >&2
    exit 69
fi
printf '{"schemaVersion": "1.0", "linker": {"path": "%s"}}\n' "$lld" > "$scratch/lld-toolset.json"

if [[ -n ${FUZZ_NO_BUILD:-} && -x $binary ]]; then
    echo "fuzz: FUZZ_NO_BUILD: using $binary as it is"
else
    echo "fuzz: building $binary"
    start=$(date +%s)
    # Swift code is instrumented by -sanitize=fuzzer; C code (llhttp in NIO, libyaml in Yams) by -Xcc.
    swift build -c release --product geoattr-fuzz --scratch-path "$scratch" --toolset "$scratch/lld-toolset.json" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
        -Xcc -fsanitize=fuzzer-no-link,address
    echo "fuzz: built in $(( $(date +%s) - start )) s"
fi
[[ $which != build ]] || exit 0

# The Swift runtime's backtracer would catch the crash signal before libFuzzer saves the input.
export SWIFT_BACKTRACE=enable=no
# No LeakSanitizer: Swift stores references in enum payloads with tag bits set (NIO's
# SocketAddress, Foundation's Data), where LSan does not recognise them, so it reports live
# objects as leaked. Memory errors are AddressSanitizer's; growth is the soak test's. No
# allocation stacks either (they halve the speed): replay a finding for them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=0:handle_abort=1:malloc_context_size=0}

# Scratch directories of runs that crashed (the others remove theirs at exit).
for stale in /dev/shm/geoattr-fuzz-* /tmp/geoattr-fuzz-*; do
    if [[ -d $stale ]] && ! kill -0 "${stale##*-}" 2>/dev/null; then rm -rf "$stale"; fi
done

# Inputs up to these sizes: the fixture index is 49 KB; YAML and requests longer than this only
# run slower (the state file's limit is 4 KiB: larger inputs test the refusal). The socket
# harness cuts an input into up to 64 sends, each a round trip through the kernel: long requests
# are left to `http`, which splits them at every byte. (A campaign whose rate falls steadily is
# more likely leaking watch streams than slowed by input size: the harness checks for those.)
declare -A max_len=([http]=4096 [http-socket]=1024 [index]=65536 [index-arrow]=65536 [config]=2048 [cache]=8192 [state]=8192)
summary=()
failed=0
for target in "${targets[@]}"; do
    corpus=.fuzz/corpus/$target
    artifacts=.fuzz/artifacts/$target
    log=.fuzz/logs/$target.log
    mkdir -p "$corpus" "$artifacts" .fuzz/logs
    kind=${target%-socket}  # http-socket takes http's inputs,
    kind=${kind%-arrow}     # index-arrow index's
    if [[ -d Fuzz/seeds/$kind ]]; then
        cp -n Fuzz/seeds/"$kind"/* "$corpus"/ 2>/dev/null || true
    fi
    GEOATTR_FUZZ_TARGET=$target "$binary" --write-seeds "$corpus"
    # The documented defaults, without the comments (short inputs run faster).
    [[ $target == config ]] && grep -v -E '^ *(#|$)' config/geoattrd.yaml > "$corpus/geoattrd-defaults.yaml"
    # In-process, one job (no -jobs: that would fork workers with logs of their own).
    flags=(-max_total_time="$seconds" -print_final_stats=1 -timeout=30 -rss_limit_mb=4096 -detect_leaks=0
        -max_len="${max_len[$target]}" -artifact_prefix="$artifacts/")
    [[ -f Fuzz/dicts/$kind.dict ]] && flags+=(-dict=Fuzz/dicts/$kind.dict)
    [[ -n ${FUZZ_RUNS:-} ]] && flags+=(-runs="$FUZZ_RUNS")
    # shellcheck disable=SC2206
    flags+=(${FUZZ_FLAGS:-})
    echo "fuzz: $target: ${flags[*]} $corpus (log: $log)"
    pin=()
    [[ -n ${FUZZ_CPU:-} ]] && pin=(taskset -c "$FUZZ_CPU")
    status=0
    # A daemon's small environment (as under systemd), the same on every machine.
    env -i PATH="$PATH" SWIFT_BACKTRACE="$SWIFT_BACKTRACE" ASAN_OPTIONS="$ASAN_OPTIONS" GEOATTR_FUZZ_TARGET="$target" \
        ${GEOATTR_FUZZ_VERBOSE:+GEOATTR_FUZZ_VERBOSE=1} "${pin[@]}" "$binary" "${flags[@]}" "$corpus" < /dev/null > "$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    found=$(grep -c "Test unit written to" "$log" || true)
    if [[ $status -ne 0 || $found -ne 0 ]]; then
        failed=1
        result="FAILED (exit $status): $(grep -m1 -E '^(SUMMARY|==[0-9]+==ERROR)|Fatal error' "$log" || echo 'see the log')"
        grep -E "Test unit written to" "$log" || true
        tail -40 "$log"
    else
        result="no crash"
    fi
    summary+=("$(printf '%-11s %12s executions %8s exec/s %6s s  %s' "$target" "${executions:-?}" "${rate:-?}" "${took:-?}" "$result")")
done

echo
echo "fuzz: summary"
printf '  %s\n' "${summary[@]}"
exit "$failed"
