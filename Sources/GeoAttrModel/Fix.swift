/// How many dimensions a position fix resolves.
public enum FixMode: Int, Sendable, Hashable, Codable {
    case twoDimensional = 2
    case threeDimensional = 3
}

/// Where a fix's time came from.
public enum FixTimeSource: String, Sendable, Hashable, Codable {
    /// The receiver's own UTC time.
    case receiver
    /// The receiver's time moved by whole 1024-week GPS eras to match the system clock.
    case receiverRolloverCorrected = "receiver-rollover-corrected"
    /// The receiver sent no time with the accepted report: the system clock when it arrived.
    case systemClock = "system-clock"
}

/// Which kind of source produced a fix.
public enum FixOrigin: String, Sendable, Hashable, Codable {
    case gps
    case `static`
}

/// A position fix that passed the acceptance rules.
public struct Fix: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double
    /// Metres above mean sea level, or above the ellipsoid when the receiver gives only that.
    public var altitudeMeters: Double?
    public var mode: FixMode
    /// Horizontal error estimate in metres; `nil` when the receiver gives none.
    public var horizontalErrorMeters: Double?
    /// The receiver's time of the fix, `nil` when the accepted report carried none.
    public var receiverTime: UTCTimestamp?
    public var timeSource: FixTimeSource
    /// The time the receiver sent when it cannot be right (before 2024, or over a year ahead of
    /// a sane system clock, after the week-rollover correction): kept to tell the operator,
    /// never used to date the fix.
    public var refusedReceiverTime: UTCTimestamp?
    /// The system clock when the accepted report arrived.
    public var receivedAt: UTCTimestamp
    /// From the start of the attempt to the accepted report, in milliseconds.
    public var timeToFixMilliseconds: Double?
    public var origin: FixOrigin
    /// `true` when no report met the error bound and this one, within the looser fallback
    /// bound, was taken when the attempt ended (timeout, or gpsd closing the connection);
    /// `nil` otherwise.
    public var acceptedAsFallback: Bool?
    /// The device gpsd read the fix from (its path, "" when gpsd did not say). Not stored or
    /// served: doctor tells a replay on a pseudo-terminal from a receiver with it.
    public var receiverDevice = ""

    public init(
        latitude: Double,
        longitude: Double,
        altitudeMeters: Double? = nil,
        mode: FixMode,
        horizontalErrorMeters: Double? = nil,
        receiverTime: UTCTimestamp? = nil,
        timeSource: FixTimeSource,
        receivedAt: UTCTimestamp,
        timeToFixMilliseconds: Double? = nil,
        origin: FixOrigin,
        refusedReceiverTime: UTCTimestamp? = nil,
        acceptedAsFallback: Bool? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeMeters = altitudeMeters
        self.mode = mode
        self.horizontalErrorMeters = horizontalErrorMeters
        self.receiverTime = receiverTime
        self.timeSource = timeSource
        self.receivedAt = receivedAt
        self.timeToFixMilliseconds = timeToFixMilliseconds
        self.origin = origin
        self.refusedReceiverTime = refusedReceiverTime
        self.acceptedAsFallback = acceptedAsFallback
    }

    /// The best available time of the fix: the receiver's, else the arrival time.
    public var time: UTCTimestamp { receiverTime ?? receivedAt }

    enum CodingKeys: String, CodingKey {
        case latitude = "lat"
        case longitude = "lon"
        case altitudeMeters = "alt_m"
        case mode
        case horizontalErrorMeters = "error_m"
        case receiverTime = "receiver_time"
        case timeSource = "time_source"
        case receivedAt = "received_at"
        case timeToFixMilliseconds = "time_to_fix_ms"
        case origin
        case refusedReceiverTime = "refused_receiver_time"
        case acceptedAsFallback = "fallback"
    }
}
