#!/usr/bin/env bash
# The test suite under ThreadSanitizer or AddressSanitizer.
#
#   bash scripts/sanitize.sh [thread|address] [quick|full|build]      (default: thread quick)
#
# build: the instrumented build alone (CI makes it in the background beside the test suite).
# quick: the core, Linux adapter, geocoder adapter, server, gpsd, geoattrctl and daemon-process
#        tests (GeoAttrCoreTests, GeoAttrLinuxTests, GeoAttrGeocoderTests, GeoAttrServerTests,
#        GeoAttrGPSDTests, GeoAttrCtlTests, GeoAttrdTests), then the
#        batch lookup's (BatchLookupTests: its jobs run on threads of their own); CI runs
#        `thread quick`.
# full:  the whole suite as scripts/test.sh runs it: everything but the geocoder's index tests,
#        then those on their own. (The fault-injection suite runs the release build:
#        scripts/fault-suite.sh.)
#
# Builds into its own scratch path (.build-tsan, .build-asan). The daemon-process tests run the
# geoattrd and geoattrctl built beside the test bundle, so the daemon and the CLI are
# instrumented too. Every instrumented process (the test runner and each child, including
# children running as other uids) writes its reports to a file in one directory (`log_path`),
# and the run fails if any report file appears, whatever the tests concluded: a report in a
# daemon cannot get lost in that daemon's captured log. With halt_on_error=1 the reporting
# process also exits at once (non-zero), so the test that started it fails as well.
# Extra sanitizer options can be given in TSAN_OPTIONS / ASAN_OPTIONS: they come last and win.
#
# ThreadSanitizer runs preload two annotation files, each explaining itself:
# scripts/tsan-mutex-annotations.c makes the toolchain's Synchronization.Mutex visible to TSan
# when it is contended, and scripts/tsan-continuation-annotations.c a continuation resumed
# before its task suspended; scripts/tsan-handoff-check.swift checks the latter against the
# toolchain before the suite runs. scripts/tsan.supp suppresses the same runtime hand-off where
# it shows inside the continuation's resume functions (with the reason).
#
# GEOATTR_TEST_TIME_SCALE (3 unless set) makes gpsfake replay tracks that much slower, as the
# instrumented runner and daemons are (Tests/TestSupport/TestTiming.swift).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: $0 [thread|address] [quick|full|build]" >&2
    exit 64
}
sanitizer=${1:-thread}
scope=${2:-quick}
case "$sanitizer" in
    thread) scratch=.build-tsan ;;
    address) scratch=.build-asan ;;
    *) usage ;;
esac
case "$scope" in
    quick | full | build) ;;
    *) usage ;;
esac

bash scripts/install-deps.sh

reports=$(mktemp -d "${TMPDIR:-/tmp}/geoattrd-sanitize-$sanitizer.XXXXXX")
# Clients run as other uids (setpriv) are instrumented too, and must be able to write here.
chmod 1777 "$reports"

case "$sanitizer" in
    thread)
        export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp log_path=$reports/tsan${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
        ;;
    address)
        # LeakSanitizer stays on: every leak it reports at a process's exit fails the run (and
        # makes that process exit 1, which the daemon tests' clean-exit checks see). Leaks in the
        # toolchain's libraries are suppressed one by one, with the reason: scripts/lsan.supp.
        export ASAN_OPTIONS="halt_on_error=1 detect_leaks=1 log_path=$reports/asan${ASAN_OPTIONS:+ $ASAN_OPTIONS}"
        export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp print_suppressions=0${LSAN_OPTIONS:+ $LSAN_OPTIONS}"
        ;;
esac

# The preloaded annotations must fit this toolchain's runtime: a hand-off through a continuation
# is silent, a write after it is reported (scripts/tsan-handoff-check.swift).
check_handoff() {
    local check="$PWD/$scratch/tsan-handoff-check" logs
    swiftc -swift-version 6 -O -sanitize=thread -o "$check" scripts/tsan-handoff-check.swift
    logs=$(mktemp -d "${TMPDIR:-/tmp}/geoattrd-tsan-check.XXXXXX")
    # NAME ARGUMENTS...: runs the check without the suite's suppressions; prints its report files.
    reports_of() {
        local name=$1
        shift
        LD_PRELOAD="$preload" TSAN_OPTIONS="log_path=$logs/$name" "$check" "$@" >/dev/null || true
        find "$logs" -type f -name "$name.*"
    }
    if [ -n "$(reports_of handoff 20000)" ]; then
        cat "$logs"/* >&2
        echo "sanitize: a continuation hand-off is reported with the annotations preloaded: scripts/tsan-continuation-annotations.c does not fit this toolchain" >&2
        exit 1
    fi
    if [ -z "$(reports_of race 2000 write-after-resume)" ]; then
        echo "sanitize: a write after a continuation's resume is not reported: the annotations hide races" >&2
        exit 1
    fi
    rm -rf "$logs"
    echo "sanitize: continuation hand-off check passed" >&2
}

started=$SECONDS
swift build --build-tests --scratch-path "$scratch" --sanitize="$sanitizer"
if [ "$scope" = build ]; then
    rmdir "$reports"
    echo "sanitize: $sanitizer build $((SECONDS - started)) s" >&2
    exit 0
fi
preload=
if [ "$sanitizer" = thread ]; then
    preload="$PWD/$scratch/tsan-annotations.so"
    clang -shared -fPIC -O2 -Wall -Werror -o "$preload" \
        scripts/tsan-mutex-annotations.c scripts/tsan-continuation-annotations.c -ldl
    synchronization="$(dirname "$(command -v swift)")/../lib/swift/linux/libswiftSynchronization.so"
    exported=$(nm -D --defined-only "$synchronization" || true)
    for symbol in '$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF' '$s15Synchronization12_MutexHandleV11_unlockSlowyyF'; do
        if ! grep -qF " $symbol" <<<"$exported"; then
            echo "sanitize: warning: $synchronization has no $symbol: Mutex is not annotated for TSan (scripts/tsan-mutex-annotations.c)" >&2
        fi
    done
    check_handoff
fi
export GEOATTR_TEST_TIME_SCALE=${GEOATTR_TEST_TIME_SCALE:-3}
echo "sanitize: build $((SECONDS - started)) s" >&2

status=0
run() {
    local begin=$SECONDS
    LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}" \
        swift test --skip-build --scratch-path "$scratch" --sanitize="$sanitizer" "$@" || status=1
    echo "sanitize: swift test $* $((SECONDS - begin)) s" >&2
}
if [ "$scope" = quick ]; then
    # The unit suites apart from the gpsfake and daemon-process ones: run together, their
    # parallel load under the sanitizer slows the daemons past the timing those tests allow.
    run --filter GeoAttrCoreTests --filter GeoAttrLinuxTests --filter GeoAttrGeocoderTests --filter GeoAttrServerTests
    run --filter GeoAttrGPSDTests --filter GeoAttrCtlTests --filter GeoAttrdTests
    run --filter BatchLookupTests
else
    # As in scripts/test.sh: the index tests hold the concurrency threads, so they run alone.
    run --skip GeoIndexTests --skip GeoAttrdFaultTests
    run --filter GeoIndexTests
fi

found=$(find "$reports" -type f | sort)
if [ -n "$found" ]; then
    for report in $found; do
        echo "==== $report" >&2
        cat "$report" >&2
    done
    echo "sanitize: $(echo "$found" | wc -l) $sanitizer sanitizer report file(s), above and in $reports" >&2
    status=1
else
    rmdir "$reports"
fi
if [ "$status" -ne 0 ]; then
    echo "sanitize: $sanitizer $scope FAILED ($((SECONDS - started)) s)" >&2
    exit 1
fi
echo "sanitize: $sanitizer $scope passed, no sanitizer report ($((SECONDS - started)) s)" >&2
