public import GeoAttrModel

/// When a gpsd report is good enough to end a one-shot attempt. All configurable.
public struct FixAcceptanceRules: Sendable, Hashable {
    /// The least fix mode accepted.
    public var minimumMode: FixMode = .twoDimensional
    /// The largest horizontal error accepted at once (100 m places a point well enough for the
    /// place the attributes name).
    public var maximumErrorMeters: Double = 100
    /// On timeout, the best fix seen is returned if its error is within this looser bound.
    public var timeoutFallbackErrorMeters: Double = 500
    /// Accept fixes from receivers that never report an error estimate, marked unknown.
    public var acceptUnknownError: Bool = true
    /// Refuse reports without the receiver's time (otherwise the arrival time stands in).
    public var requireTime: Bool = false
    /// The whole attempt, from connecting to gpsd to giving up.
    public var timeout: Duration = .seconds(60)
    /// Give up early when the sky view shows no satellite with a signal for this long.
    public var noSatelliteTimeout: Duration = .seconds(20)
    /// How long the first report of a session (and a report without an error estimate from a
    /// receiver not yet known never to send one) waits for the next report, so that the better
    /// of the two is kept: gpsd's first report for an epoch is often built from the RMC sentence
    /// alone (2D, no estimate), and the full one follows within a second. Zero: no wait.
    public var firstReportWait: Duration = .seconds(1)

    public init() {}
}
