import Foundation
import GeoAttrModel
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system clock stepped under the running daemon. The schedule runs on the monotonic clock
/// and must not notice: fixes keep the TTL cadence, `age_s` and `stale` do not move; what is
/// stamped with the wall clock (`updated_at`, `next_fix_at`, log lines) follows the step, and
/// `generation` keeps growing.
@Suite("fault: clock", .serialized)
struct ClockFaultTests {
    @Test("wall clock stepped back 3 h, forward 6 h and back while fixing every second: the cadence holds, age and stale ignore the steps")
    func wallClockSteps() async throws {
        let clock = try await WallClockStep.make()
        let track = FaultTrack.steady()
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            let fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 1), environment: clock.environment)
            let daemon = fault.daemon
            // Stepping what the daemon reads is the whole of a real step only if it arms no
            // timer on the wall clock (a real step would move those): all its timers are
            // monotonic or boot-time.
            let timers = WallClockStep.timerClocks(of: daemon.process.pid)
            #expect(!timers.isEmpty, "no timerfd found: the check proves nothing")
            #expect(timers.allSatisfy { $0 == CLOCK_MONOTONIC || $0 == CLOCK_BOOTTIME }, "timer clocks: \(timers)")

            var generations: [UInt64] = []
            for offset: Int64 in [0, -3 * 3600, 3 * 3600, 0] {
                clock.set(offsetSeconds: offset)
                let gpsdMark = gpsfake.daemonConnections.count
                // The step is in effect: the next attempt starts at the stepped time (a wait that
                // runs out shows the last attempt's stamp).
                try await daemon.waitForStatus("an attempt started \(offset) s from true time") { status in
                    guard let started = status.lastAttempt.flatMap({ UTCTimestamp(iso8601: $0.startedAt) }) else { return false }
                    return abs(started.seconds - UTCTimestamp.now().seconds - offset) < 60
                }
                let fixed = await eventually(timeout: .seconds(20)) { gpsfake.daemonConnections.count >= gpsdMark + 3 }
                #expect(fixed, "fewer than 3 fixes in 20 s after the step to \(offset) s: \(daemon.log.text.suffix(2000))")
                // Right after a fix: fresh, by the monotonic clock.
                try await daemon.waitForGeneration(above: await daemon.status()?.generation)
                let document = try #require(await fault.served())
                #expect(document.ageS <= 1 && !document.stale, "age_s \(document.ageS), stale \(document.stale) after the step to \(offset) s")
                // updated_at is wall-clock: it follows the step.
                let updated = try #require(UTCTimestamp(iso8601: document.updatedAt))
                #expect(abs(updated.seconds - UTCTimestamp.now().seconds - offset) < 60, "updated_at \(document.updatedAt) at offset \(offset)")
                generations.append(document.generation)
            }
            #expect(zip(generations, generations.dropFirst()).allSatisfy { $0 < $1 }, "generation went back: \(generations)")

            // The schedule: from each result to the next scheduled attempt, one TTL (1 s), by
            // the arrival of the daemon's log lines (the lines' own stamps are the stepped clock).
            let lines = daemon.log.all.filter { $0.text.contains("fix accepted") || $0.text.contains("taking a fix trigger=schedule") }
            let waits = zip(lines, lines.dropFirst())
                .filter { $0.0.text.contains("fix accepted") && $0.1.text.contains("taking a fix") }
                .map { secondsBetween($0.0, $0.1) }
            #expect(waits.count >= 12)
            #expect(waits.allSatisfy { $0 >= 0.9 }, "a fix was scheduled early: waits \(waits)")
            #expect(waits.allSatisfy { $0 <= 2.5 }, "a fix was scheduled late: waits \(waits)")
            // And as gpsd saw it: one connection per TTL plus the time to a fix.
            let connections = gpsfake.daemonConnections
            let gaps = zip(connections, connections.dropFirst()).map { secondsBetween($0, $1) }
            #expect(gaps.allSatisfy { $0 >= 0.9 && $0 <= 5 }, "gpsd saw fixes at \(gaps) s intervals")
            print("wall clock steps: \(connections.count) fixes; result to next attempt \(waits.min() ?? 0)...\(waits.max() ?? 0) s; connection gaps \(gaps.min() ?? 0)...\(gaps.max() ?? 0) s")
            await fault.expectSurvived()
            await fault.stop()
        }
    }
}

/// Steps the wall clock of one process: a small LD_PRELOAD library, built at test time, that
/// adds an offset to what `clock_gettime` (CLOCK_REALTIME, _COARSE, TAI), `gettimeofday`,
/// `time` and `timespec_get` return. The offset lives in a file the library maps, so the test
/// changes it while the process runs. Monotonic and boot-time clocks are untouched, as a real
/// step leaves them.
///
/// Not libfaketime (Debian's 0.9.10): its `timerfd_settime` hook shifts absolute deadlines of
/// CLOCK_MONOTONIC and CLOCK_BOOTTIME timers by the fake offset even with
/// FAKETIME_DONT_FAKE_MONOTONIC=1 (a 1 s monotonic timer did not fire in 5 s under -3h or
/// +3h), and dispatch arms its timers through timerfd: the daemon's monotonic schedule would be
/// moved by the injector, not by the fault. Its constructor also calls setenv(), which leaves
/// Swift's CommandLine.arguments empty (the runtime finds argv through `environ`).
struct WallClockStep: Sendable {
    let directory: TemporaryDirectory
    let library: String
    let offsetFile: String

    var environment: [String: String] {
        ["LD_PRELOAD": library, "WALLCLOCK_STEP_FILE": offsetFile]
    }

    static func make() async throws -> WallClockStep {
        let directory = try TemporaryDirectory(prefix: "wallclock")
        let source = try directory.write(Self.source, to: "wallclock-step.c")
        let library = directory.file("wallclock-step.so")
        let compiler = ["clang", "cc"].first { Self.inPath($0) }
        let cc = try #require(compiler, "no C compiler (clang or cc) to build the clock-step library")
        let result = try await CommandResult.run(
            "/usr/bin/env", [cc, "-shared", "-fPIC", "-O2", "-w", "-o", library, source, "-ldl"], timeout: .seconds(60))
        try #require(result.status == 0, "building the clock-step library failed: \(result.stderr)")
        let offsetFile = directory.file("offset")
        let step = WallClockStep(directory: directory, library: library, offsetFile: offsetFile)
        guard FileManager.default.createFile(atPath: offsetFile, contents: Data(count: 8)) else {
            throw FaultInjectionError(description: "cannot create \(offsetFile)")
        }
        return step
    }

    /// Sets the offset, in place (the library has the file mapped).
    func set(offsetSeconds: Int64) {
        var nanoseconds = offsetSeconds * 1_000_000_000
        let fd = open(offsetFile, O_WRONLY)
        guard fd >= 0 else { return }
        _ = withUnsafeBytes(of: &nanoseconds) { pwrite(fd, $0.baseAddress, 8, 0) }
        close(fd)
    }

    /// The clocks of the timerfds process `pid` holds (the `clockid:` of each in fdinfo).
    static func timerClocks(of pid: pid_t) -> [Int32] {
        let directory = "/proc/\(pid)/fdinfo"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return entries.compactMap { entry in
            guard let info = try? String(contentsOfFile: "\(directory)/\(entry)", encoding: .utf8),
                  let line = info.split(separator: "\n").first(where: { $0.hasPrefix("clockid:") })
            else { return nil }
            return Int32(line.dropFirst("clockid:".count).trimmingCharacters(in: .whitespaces))
        }
    }

    static func inPath(_ tool: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(tool)", X_OK) == 0 }
    }

    static let source = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdint.h>
        #include <stdlib.h>
        #include <sys/mman.h>
        #include <sys/time.h>
        #include <time.h>
        #include <unistd.h>

        /* What the process reads of the wall clock, moved by the offset (nanoseconds, 8 bytes,
           native order) in the file WALLCLOCK_STEP_FILE, mapped shared so that rewriting it in
           place steps the clock at once. Monotonic and boot-time clocks are left alone. */

        static int (*real_clock_gettime)(clockid_t, struct timespec *);
        static const volatile int64_t *offset_ns;

        static void resolve(void) {
            if (!real_clock_gettime)
                real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
        }

        __attribute__((constructor)) static void wallclock_step_init(void) {
            resolve();
            const char *path = getenv("WALLCLOCK_STEP_FILE");
            if (!path) return;
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) return;
            void *map = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
            close(fd);
            if (map != MAP_FAILED) offset_ns = map;
        }

        static void shift(struct timespec *ts) {
            if (!offset_ns) return;
            int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + __atomic_load_n(offset_ns, __ATOMIC_RELAXED);
            ts->tv_sec = ns / 1000000000;
            ts->tv_nsec = ns % 1000000000;
            if (ts->tv_nsec < 0) { ts->tv_nsec += 1000000000; ts->tv_sec -= 1; }
        }

        int clock_gettime(clockid_t clock, struct timespec *ts) {
            resolve();
            int rc = real_clock_gettime(clock, ts);
            if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI)) shift(ts);
            return rc;
        }

        int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
            struct timespec ts;
            int rc = clock_gettime(CLOCK_REALTIME, &ts);
            if (rc == 0 && tv) { tv->tv_sec = ts.tv_sec; tv->tv_usec = ts.tv_nsec / 1000; }
            if (tz) { struct timezone *zone = tz; zone->tz_minuteswest = 0; zone->tz_dsttime = 0; }
            return rc;
        }

        time_t time(time_t *out) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            if (out) *out = ts.tv_sec;
            return ts.tv_sec;
        }

        int timespec_get(struct timespec *ts, int base) {
            return base == TIME_UTC && clock_gettime(CLOCK_REALTIME, ts) == 0 ? base : 0;
        }
        """#
}
