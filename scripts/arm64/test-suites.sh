#!/usr/bin/env bash
# The package's Swift test suites that do not depend on timing, built for arm64 and run under
# qemu-user: the debug test binary (swift build --build-tests) is linked against sid's dynamic
# Swift runtime and run in the sid arm64 runtime sysroot (scripts/arm64/test-runtime.sh, made
# first, with the cross toolchain it needs), one suite at a time, each under a time limit.
#   flock /tmp/geoattrd-build.lock scripts/arm64/test-suites.sh [SUITE...]
# Default suites: GeoAttrGeocoderTests GeoAttrCoreTests GeoAttrServerTests
# GeoAttrDaemonConfigTests. The build compiles every target of the package, tests included, with
# Debian's Swift 6.2.3, and fails on a warning in the project's own code. Logs and xUnit results go to $GEOATTRD_ARM64_CACHE/test-results; the
# last lines say, per suite, how many tests ran, passed and failed, and how long it took.
# Exit status: 0 when every suite passed, 1 otherwise.
#   GEOATTRD_ARM64_TEST_TIMEOUT  seconds a suite may run (default 3600)
#   GEOATTRD_ARM64_QEMU_CPU      the CPU qemu emulates (default neoverse-n1)
# Costs, on two cores: the runtime sysroot once (46 MB from Debian's archive, about 15 s); the
# debug build, about 3 minutes cold; the runs, where debug Swift is some 40 times slower under
# qemu than natively: the default suites about a minute together, GeoIndexTests (47 s natively)
# more than 20 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh

# GeoIndexTests is left out by default: each of its suites builds an index from fixtures first,
# which debug code under qemu does some 40 times slower than natively, and the suite outlasts
# 20 minutes. The arm64 geocoder is checked instead by the release build's lookups
# (compare-lookups.py, 200,000 points against the native build). It still runs by name.
default_suites=(GeoAttrGeocoderTests GeoAttrCoreTests GeoAttrServerTests GeoAttrDaemonConfigTests)
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=("${default_suites[@]}")
# Tests left out under emulation, by suite: a regular expression over test names (swift-testing's
# --skip), each with the reason.
declare -A skip=()
# A test that runs a built product starts an arm64 child, which only the kernel's binfmt_misc
# handler for aarch64 can run (qemu-user does not follow exec); with one, the child gets the
# runtime sysroot and the CPU through qemu's environment variables. Host programs (/bin/sh,
# python3) run natively either way.
if grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
    child_qemu=true
else
    child_qemu=false
    skip[GeoAttrDaemonConfigTests]='ConfigurationFlagTests/helpMatchesTheTable'  # runs geoattrd --help
fi

timeout_seconds=${GEOATTRD_ARM64_TEST_TIMEOUT:-3600}
# qemu's default CPU, max, emulates pointer authentication and branch target identification,
# which sid's libraries use in every function, in software: the tests run twice as slowly. A
# Neoverse N1 has neither, as most arm64 boards running Debian 12.
qemu_cpu=${GEOATTRD_ARM64_QEMU_CPU:-neoverse-n1}
scratch=$arm64_cache/build-tests
results=$arm64_cache/test-results
binary=$scratch/aarch64-unknown-linux-gnu/debug/geoattrdPackageTests.xctest

bash scripts/arm64/test-runtime.sh

build() {
    local start log=$results/build.log target
    start=$(arm64_now)
    # The project's own modules are compiled every time, so that their warnings are printed every
    # time: a module compiled in an earlier run would say nothing. Their objects go (the build
    # plan's files stay: SwiftPM writes them only when it plans); the dependencies stay built.
    for target in Sources/* Tests/* Fuzz/* Benchmarks/*; do
        [ ! -d "$scratch/aarch64-unknown-linux-gnu/debug/${target##*/}.build" ] ||
            find "$scratch/aarch64-unknown-linux-gnu/debug/${target##*/}.build" -name '*.o' -delete
    done
    bash scripts/arm64/swift-build.sh --scratch-path "$scratch" -c debug --build-tests \
        --swift-sdks-path "$arm64_test_sdks" --swift-sdk "$test_sdk_name" 2>&1 | tee "$log" >&2
    echo "test-suites: build: $(arm64_elapsed "$start") s" >&2
    if grep -E "^$PWD/(Sources|Tests|Fuzz|Benchmarks)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" | sort -u | grep . >&2; then
        echo "test-suites: Swift 6.2.3 printed warnings in the project's code (above); fix them" >&2
        exit 1
    fi
    echo "test-suites: no warning in the project's code from Swift 6.2.3" >&2
}

# The loader's own account of every library the binary needs: a missing one is named here,
# not as a crash of the first suite.
check_libraries() {
    local listing
    listing=$(qemu-aarch64-static -cpu "$qemu_cpu" -L "$arm64_runtime" "$arm64_runtime/usr/lib/ld-linux-aarch64.so.1" --list "$binary" 2>&1) || {
        echo "$listing" >&2
        echo "test-suites: the runtime sysroot cannot load $binary" >&2
        exit 1
    }
    if grep -q 'not found' <<<"$listing"; then
        grep 'not found' <<<"$listing" >&2
        echo "test-suites: the runtime sysroot lacks libraries $binary needs" >&2
        exit 1
    fi
}

# run_suite SUITE: one line of results on stdout, the test output in its log.
run_suite() {
    local suite=$1 start status=0 log=$results/$1.log xml=$results/$1.xml arguments
    arguments=(--testing-library swift-testing --filter "^$suite\\." --xunit-output "$xml")
    [ -z "${skip[$suite]:-}" ] || arguments+=(--skip "${skip[$suite]}")
    rm -f "$xml"
    start=$(arm64_now)
    # Every symbol bound at start: a library of the runtime sysroot that lacks one fails here,
    # not in the middle of a test. timeout ends the whole process group, children included.
    local environment=(-E LD_BIND_NOW=1 -E NO_COLOR=1)
    ! $child_qemu || environment+=(-E "QEMU_LD_PREFIX=$arm64_runtime" -E "QEMU_CPU=$qemu_cpu")
    timeout --kill-after=30 "$timeout_seconds" qemu-aarch64-static -cpu "$qemu_cpu" -L "$arm64_runtime" \
        "${environment[@]}" "$binary" "${arguments[@]}" >"$log" 2>&1 || status=$?
    local elapsed tests='?' failures='?' skipped='?'
    elapsed=$(arm64_elapsed "$start")
    # swift-testing writes the xUnit totals at the end. They count a test once but its failures
    # once per issue: a failed test is a test case that is not an empty element.
    if grep -q '<testsuite ' "$xml" 2>/dev/null; then
        tests=$(grep -o '<testsuite [^>]*>' "$xml" | head -1 | sed -n 's/.* tests="\([0-9]*\)".*/\1/p')
        skipped=$(grep -o '<testsuite [^>]*>' "$xml" | head -1 | sed -n 's/.* skipped="\([0-9]*\)".*/\1/p')
        failures=$(grep -c '<testcase [^>]*[^/]>' "$xml" || true)
    else
        # Cut short: what had finished, from the log.
        tests="$(grep -E '^. Test .* (passed|failed) after' "$log" | grep -cv 'Test run with' || true) finished"
        failures=$(grep -E '^. Test .* failed after' "$log" | grep -cv 'Test run with' || true)
    fi
    local verdict=passed
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        verdict="timed out after $timeout_seconds s"
    elif [ "$status" -gt 128 ]; then
        verdict="ended by SIG$(kill -l $((status - 128)))"
    elif [ "$status" -ne 0 ]; then
        verdict="failed (exit $status)"
    fi
    echo "$suite: $verdict: $tests tests, $failures failed, $skipped skipped; $elapsed s; $log"
    [ "$verdict" = passed ]
}

total=$(arm64_now)
mkdir -p "$results"
build
check_libraries
summary=()
failed=0
for suite in "${suites[@]}"; do
    summary+=("$(run_suite "$suite")") || failed=1
    echo "test-suites: ${summary[-1]}" >&2
done
echo "test-suites: qemu -cpu $qemu_cpu, runtime $arm64_runtime, total $(arm64_elapsed "$total") s" >&2
printf '%s\n' "${summary[@]}"
exit "$failed"
