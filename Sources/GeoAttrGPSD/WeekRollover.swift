import GeoAttrModel

/// GPS week-number rollover: receivers with a 10-bit week counter date their fixes whole
/// 1024-week eras (19.6 years) off once their firmware's era has passed.
enum WeekRollover {
    static let eraSeconds: Int64 = 1024 * 7 * 86_400
    /// How close to a whole era the difference must be: a receiver's clock is seconds off, but
    /// a replayed or delayed report may be hours old.
    static let toleranceSeconds: Int64 = 7 * 86_400
    /// Before this the system clock is not trusted to judge (no RTC, no NTP yet): 2024-01-01.
    static let saneClockSeconds: Int64 = 1_704_067_200

    /// How far ahead of a sane system clock a receiver's time may be. A system clock that is
    /// wrong is behind (a device without a real-time clock, restored from its last shutdown),
    /// and a year is far beyond replayed or delayed reports.
    static let aheadToleranceSeconds: Int64 = 366 * 86_400

    /// Whether `receiverTime` (already corrected for rollover) can be the time of a fix received
    /// at `systemClock`: not before 2024 (the sane-clock floor: no fix this software takes is
    /// older), not more than a year ahead. A system clock before 2024 is not trusted to judge.
    static func isPlausible(_ receiverTime: UTCTimestamp, systemClock: UTCTimestamp) -> Bool {
        guard systemClock.seconds >= saneClockSeconds else { return true }
        return receiverTime.seconds >= saneClockSeconds && receiverTime.seconds - systemClock.seconds <= aheadToleranceSeconds
    }

    /// Moves `receiverTime` by whole eras towards `systemClock` when it is that far off.
    static func correct(_ receiverTime: UTCTimestamp, systemClock: UTCTimestamp) -> UTCTimestamp {
        guard systemClock.seconds >= saneClockSeconds else { return receiverTime }
        let difference = systemClock.seconds - receiverTime.seconds
        let eras = (Double(difference) / Double(eraSeconds)).rounded()
        guard eras != 0, abs(eras) <= 4 else { return receiverTime }
        let shift = Int64(eras) * eraSeconds
        guard abs(difference - shift) <= toleranceSeconds else { return receiverTime }
        return receiverTime.adding(seconds: shift)
    }
}
