import Foundation

/// How much slower than usual the code under test may run: `GEOATTR_TEST_TIME_SCALE` (a number,
/// at least 1; 1 when unset). scripts/sanitize.sh sets it to 3: under a sanitizer the test
/// runner and the daemons it starts run several times slower, while gpsfake (Python, not
/// instrumented) would replay a track at its usual pace, and a scenario's phases (no fix yet, no
/// time yet) could be over before the instrumented client gets to see them.
public enum TestTiming {
    public static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["GEOATTR_TEST_TIME_SCALE"], let value = Double(text), value >= 1
        else { return 1 }
        return value
    }()
}
