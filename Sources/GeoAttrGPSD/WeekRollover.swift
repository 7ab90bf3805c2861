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
