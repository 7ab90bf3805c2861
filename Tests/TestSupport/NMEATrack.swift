import Foundation

/// Generates NMEA 0183 logs with correct checksums, epoch by epoch, for gpsfake to replay.
///
/// Each epoch writes GGA, GSA, GSV and RMC (each switchable) with the same UTC time. Positions
/// are written with six decimals of minutes, so gpsd reports them to better than 1e-7 degrees.
public struct NMEATrack: Sendable {
    public struct Epoch: Sendable {
        public var latitude: Double
        public var longitude: Double
        /// 1 no fix, 2 2D, 3 3D.
        public var mode: Int
        /// HDOP; `nil` writes empty DOP fields (a receiver with no error estimate).
        public var hdop: Double?
        public var altitude: Double = 50
        /// Satellites listed in view, and how many of them have a signal.
        public var satellitesInView: Int = 8
        public var satellitesWithSignal: Int = 8
        public var gga = true
        public var gsa = true
        public var gsv = true
        public var rmc = true
        /// Raw bytes written before the epoch's sentences (garbage, truncated sentences).
        public var noiseBefore: String = ""
        /// RMC first, before GGA and GSA (as many receivers order an epoch): a gpsd that has just
        /// opened the receiver then reports the epoch twice, from RMC alone and then in full.
        public var rmcFirst = false
        /// A GST sentence with these 1-sigma latitude and longitude errors in metres.
        public var gst: (latitude: Double, longitude: Double)?
        /// A SiRF $PSRFEPE sentence, first in the epoch, with the receiver's own estimated
        /// horizontal and vertical position errors in metres: gpsd takes them as eph and epv as
        /// they are, instead of deriving them from the DOP.
        public var epe: (horizontal: Double, vertical: Double)?

        public init(latitude: Double, longitude: Double, mode: Int, hdop: Double? = 1.2) {
            self.latitude = latitude
            self.longitude = longitude
            self.mode = mode
            self.hdop = hdop
        }
    }

    /// UTC date of the track (RMC carries it; gpsd reports no time before the first RMC).
    public var year = 2026, month = 11, day = 21
    /// Seconds after midnight UTC of the first epoch; epochs are one second apart.
    public var startSecondOfDay = 12 * 3600
    public var epochs: [Epoch] = []

    public init(epochs: [Epoch] = []) {
        self.epochs = epochs
    }

    /// UTC time of epoch `index`, as seconds since the Unix epoch.
    public func unixTime(ofEpoch index: Int) -> Int64 {
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        let midnight = calendar.date(from: components)?.timeIntervalSince1970 ?? 0
        return Int64(midnight) + Int64(startSecondOfDay + index)
    }

    public func render() -> String {
        var out = ""
        for (index, epoch) in epochs.enumerated() {
            out += epoch.noiseBefore
            out += sentences(for: epoch, at: startSecondOfDay + index).joined()
        }
        return out
    }

    func sentences(for epoch: Epoch, at secondOfDay: Int) -> [String] {
        let time = String(format: "%02d%02d%02d.00", (secondOfDay / 3600) % 24, (secondOfDay / 60) % 60, secondOfDay % 60)
        let date = String(format: "%02d%02d%02d", day, month, year % 100)
        let hasFix = epoch.mode >= 2
        let (lat, ns) = Self.degreesMinutes(epoch.latitude, isLatitude: true)
        let (lon, ew) = Self.degreesMinutes(epoch.longitude, isLatitude: false)
        let hdop = epoch.hdop.map { String(format: "%.1f", $0) } ?? ""
        var result: [String] = []
        if epoch.gga {
            if hasFix {
                let altitude = epoch.mode == 3 ? String(format: "%.1f", epoch.altitude) : ""
                result.append(Self.sentence("GPGGA,\(time),\(lat),\(ns),\(lon),\(ew),1,\(String(format: "%02d", epoch.satellitesWithSignal)),\(hdop),\(altitude),M,47.0,M,,"))
            } else {
                result.append(Self.sentence("GPGGA,\(time),,,,,0,00,\(hdop),,M,,M,,"))
            }
        }
        if epoch.gsa {
            let used = hasFix ? min(epoch.satellitesWithSignal, 12) : 0
            let prns = (0..<12).map { $0 < used ? String(format: "%02d", $0 + 1) : "" }.joined(separator: ",")
            let pdop = epoch.hdop.map { String(format: "%.1f", $0 * 1.6) } ?? ""
            let vdop = epoch.hdop.map { String(format: "%.1f", $0 * 1.3) } ?? ""
            result.append(Self.sentence("GPGSA,A,\(max(epoch.mode, 1)),\(prns),\(pdop),\(hdop),\(vdop)"))
        }
        if epoch.gsv {
            let count = epoch.satellitesInView
            let messages = max(1, (count + 3) / 4)
            for message in 0..<messages {
                var fields: [String] = []
                for satellite in (message * 4)..<min(count, message * 4 + 4) {
                    let snr = satellite < epoch.satellitesWithSignal ? "40" : ""
                    fields.append(String(format: "%02d,%02d,%03d,", satellite + 1, 20 + satellite * 5, (satellite * 40) % 360) + snr)
                }
                let body = fields.isEmpty ? "" : "," + fields.joined(separator: ",")
                result.append(Self.sentence("GPGSV,\(messages),\(message + 1),\(String(format: "%02d", count))\(body)"))
            }
        }
        if let gst = epoch.gst, hasFix {
            result.append(Self.sentence(String(format: "GPGST,%@,1.5,2.0,1.0,45.0,%.1f,%.1f,3.0", time, gst.latitude, gst.longitude)))
        }
        if epoch.rmc {
            let rmc = hasFix
                ? Self.sentence("GPRMC,\(time),A,\(lat),\(ns),\(lon),\(ew),0.0,0.0,\(date),,,A")
                : Self.sentence("GPRMC,\(time),V,,,,,,,\(date),,,N")
            if epoch.rmcFirst { result.insert(rmc, at: 0) } else { result.append(rmc) }
        }
        if let epe = epoch.epe, hasFix {
            // Before the epoch's other sentences: gpsd then carries it into every report of the epoch.
            result.insert(Self.sentence(String(format: "PSRFEPE,%@,A,%@,%.1f,%.1f,0.1,180.0", time, hdop, epe.horizontal, epe.vertical)), at: 0)
        }
        return result
    }

    /// `$BODY*CS\r\n` with the XOR checksum of BODY.
    public static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }

    static func degreesMinutes(_ value: Double, isLatitude: Bool) -> (String, String) {
        let magnitude = abs(value)
        var degrees = Int(magnitude)
        var minutes = ((magnitude - Double(degrees)) * 60 * 1_000_000).rounded() / 1_000_000
        if minutes >= 60 {
            degrees += 1
            minutes -= 60
        }
        let text = String(format: isLatitude ? "%02d%09.6f" : "%03d%09.6f", degrees, minutes)
        let hemisphere = isLatitude ? (value >= 0 ? "N" : "S") : (value >= 0 ? "E" : "W")
        return (text, hemisphere)
    }
}

extension NMEATrack.Epoch {
    /// A copy with `change` applied, for building tracks phase by phase.
    public func with(_ change: (inout NMEATrack.Epoch) -> Void) -> NMEATrack.Epoch {
        var copy = self
        change(&copy)
        return copy
    }
}

extension NMEATrack {
    /// `count` epochs of `epoch`.
    public static func repeating(_ epoch: Epoch, _ count: Int) -> [Epoch] {
        Array(repeating: epoch, count: count)
    }

    /// An epoch without a fix: no position, no DOP.
    public static func noFix(satellitesInView: Int = 0, withSignal: Int = 0) -> Epoch {
        var epoch = Epoch(latitude: 0, longitude: 0, mode: 1, hdop: nil)
        epoch.satellitesInView = satellitesInView
        epoch.satellitesWithSignal = withSignal
        return epoch
    }
}
