/// The error estimates that mean "no estimate".
///
/// gpsd computes an estimate a receiver does not send from the dilution of precision times its
/// user-equivalent range errors (libgpsd_core.c, `gpsd_error_model`): eph = HDOP x 19.0 m
/// (P_UERE_NO_DGPS), or x 4.75 m with DGPS (P_UERE_WITH_DGPS); epx and epy = XDOP/YDOP x 15.0 m
/// (H_UERE_NO_DGPS), or x 3.75 m with DGPS (H_UERE_WITH_DGPS). NMEA receivers that have no DOP
/// send 99.99, which gpsd passes through, so those products of 99.99 are placeholders, not
/// estimates: 1899.81, 474.9525, 1499.85 and 374.9625 m (gpsd's JSON prints three decimals).
/// Every other value is an estimate and is judged against the bounds, however large.
enum ErrorPlaceholders {
    /// The "no DOP" value NMEA receivers send.
    static let noDOP = 99.99
    static let ephPlaceholders = [noDOP * 19.0, noDOP * 4.75]
    static let epxyPlaceholders = [noDOP * 15.0, noDOP * 3.75]
    /// gpsd's JSON rounds to 0.001 m.
    static let tolerance = 0.0015

    static func isPlaceholder(eph: Double) -> Bool {
        ephPlaceholders.contains { abs($0 - eph) <= tolerance }
    }

    static func isPlaceholder(epxy: Double) -> Bool {
        epxyPlaceholders.contains { abs($0 - epxy) <= tolerance }
    }
}
