internal import CGPS

/// One line from gpsd, as the evaluator sees it. Built from the shim's flat struct.
enum GPSDReport: Sendable, Equatable {
    case position(PositionReport)
    case sky(SkyReport)
    case devices(count: Int, receivedNanoseconds: Int64)
    case other

    /// A TPV report. Optionals are `nil` where gpsd left the field out.
    struct PositionReport: Sendable, Equatable {
        var mode: Int
        var latitude: Double?
        var longitude: Double?
        var altitudeMSL: Double?
        var altitudeHAE: Double?
        var eph: Double?
        var epx: Double?
        var epy: Double?
        var timeSeconds: Int64?
        var timeNanoseconds: Int32 = 0
        /// CLOCK_MONOTONIC at arrival.
        var receivedNanoseconds: Int64
        /// CLOCK_REALTIME at arrival.
        var receivedRealtimeNanoseconds: Int64
        /// The receiver's device path as gpsd names it; "" when gpsd did not say.
        var device = ""
    }

    /// A SKY report.
    struct SkyReport: Sendable, Equatable {
        var satellitesVisible: Int
        var satellitesUsed: Int
        var satellitesWithSignal: Int
        var receivedNanoseconds: Int64
    }

    init(_ raw: CGPS_report) {
        switch Int(raw.kind) {
        case CGPS_REPORT_TPV:
            let fix = raw.fix
            func value(_ field: Double, _ bit: UInt32) -> Double? {
                (fix.flags & bit) != 0 ? field : nil
            }
            let hasLatLon = (fix.flags & UInt32(CGPS_FIX_HAS_LATLON)) != 0
            let hasTime = (fix.flags & UInt32(CGPS_FIX_HAS_TIME)) != 0
            self = .position(
                PositionReport(
                    mode: Int(fix.mode),
                    latitude: hasLatLon ? fix.latitude : nil,
                    longitude: hasLatLon ? fix.longitude : nil,
                    altitudeMSL: value(fix.alt_msl, UInt32(CGPS_FIX_HAS_ALT_MSL)),
                    altitudeHAE: value(fix.alt_hae, UInt32(CGPS_FIX_HAS_ALT_HAE)),
                    eph: value(fix.eph, UInt32(CGPS_FIX_HAS_EPH)),
                    epx: value(fix.epx, UInt32(CGPS_FIX_HAS_EPX)),
                    epy: value(fix.epy, UInt32(CGPS_FIX_HAS_EPY)),
                    timeSeconds: hasTime ? fix.time_sec : nil,
                    timeNanoseconds: hasTime ? Int32(clamping: fix.time_nsec) : 0,
                    receivedNanoseconds: raw.received_monotonic_ns,
                    receivedRealtimeNanoseconds: raw.received_realtime_ns,
                    device: Self.text(of: raw.device)
                )
            )
        case CGPS_REPORT_SKY:
            self = .sky(
                SkyReport(
                    satellitesVisible: Int(raw.sky.satellites_visible),
                    satellitesUsed: Int(raw.sky.satellites_used),
                    satellitesWithSignal: Int(raw.sky.satellites_with_signal),
                    receivedNanoseconds: raw.received_monotonic_ns
                )
            )
        case CGPS_REPORT_DEVICES:
            self = .devices(count: Int(raw.device_count), receivedNanoseconds: raw.received_monotonic_ns)
        default:
            self = .other
        }
    }
}

extension GPSDReport {
    /// A fixed-size C string field, up to its first NUL (or its end).
    static func text<Field>(of field: Field) -> String {
        withUnsafeBytes(of: field) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

extension GPSDReport.PositionReport {
    /// Whether gpsd sent no error estimate of any kind, placeholder or not.
    var hasNoErrorFields: Bool { eph == nil && epx == nil && epy == nil }

    /// gpsd's eph, else the radial combination of the per-axis estimates; `nil` when there is
    /// none, or only gpsd's placeholder for "no DOP" (see `ErrorPlaceholders`).
    var horizontalError: Double? {
        if let eph, !ErrorPlaceholders.isPlaceholder(eph: eph) { return eph }
        if let epx, let epy, !ErrorPlaceholders.isPlaceholder(epxy: epx), !ErrorPlaceholders.isPlaceholder(epxy: epy) {
            return (epx * epx + epy * epy).squareRoot()
        }
        return nil
    }
}
