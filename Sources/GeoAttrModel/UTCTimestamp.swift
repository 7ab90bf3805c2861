/// A UTC instant as seconds and nanoseconds since the Unix epoch, printed as ISO 8601.
///
/// Kept free of Foundation so the model links into small clients.
public struct UTCTimestamp: Sendable, Hashable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        let carry = Int64(nanoseconds) / 1_000_000_000
        var nanos = Int64(nanoseconds) % 1_000_000_000
        var secs = seconds + carry
        if nanos < 0 {
            nanos += 1_000_000_000
            secs -= 1
        }
        self.seconds = secs
        self.nanoseconds = Int32(nanos)
    }

    public init(nanosecondsSinceEpoch: Int64) {
        self.init(
            seconds: nanosecondsSinceEpoch / 1_000_000_000,
            nanoseconds: Int32(nanosecondsSinceEpoch % 1_000_000_000)
        )
    }

    public static func < (lhs: UTCTimestamp, rhs: UTCTimestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// Adds a whole number of seconds.
    public func adding(seconds delta: Int64) -> UTCTimestamp {
        UTCTimestamp(seconds: seconds + delta, nanoseconds: nanoseconds)
    }

    /// `2026-11-21T12:00:00.250Z`; milliseconds are printed only when not zero.
    public var iso8601: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
        let hour = secondOfDay / 3600
        let minute = (secondOfDay % 3600) / 60
        let second = secondOfDay % 60
        var text = "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))"
        text += "T\(Self.pad(hour, 2)):\(Self.pad(minute, 2)):\(Self.pad(second, 2))"
        let millis = Int64(nanoseconds) / 1_000_000
        if millis != 0 {
            text += ".\(Self.pad(millis, 3))"
        }
        return text + "Z"
    }

    /// Parses the form `iso8601` prints (fractional seconds optional, `Z` required).
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == 45, bytes[7] == 45, bytes[10] == 84,
            bytes[13] == 58, bytes[16] == 58, bytes.last == 90,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var nanos: Int64 = 0
        if bytes.count > 20 {
            // At most nine digits (nanoseconds): ten once made the scale loop's range negative, a
            // crash on a cache file or an answer with such a time.
            guard bytes[19] == 46, bytes.count <= 30, let fraction = number(20..<(bytes.count - 1)) else {
                return nil
            }
            var scale: Int64 = 1
            for _ in 0..<(9 - (bytes.count - 21)) { scale *= 10 }
            nanos = fraction * scale
        } else if bytes.count != 20 {
            return nil
        }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        self.init(seconds: days * 86_400 + hour * 3600 + minute * 60 + second, nanoseconds: Int32(nanos))
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // Howard Hinnant's days-from-civil algorithms: exact for the proleptic Gregorian calendar.
    static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// Encoded as its ISO 8601 text, so cache files and API answers read naturally.
extension UTCTimestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = UTCTimestamp(iso8601: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 UTC time: \(text)")
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

extension UTCTimestamp {
    /// Milliseconds since the epoch (plus `extra` seconds), saturating: 0 before the epoch,
    /// `UInt64.max` past the range, for generations, which are at least the wall clock.
    package func generationMilliseconds(plusSeconds extra: Int64 = 0) -> UInt64 {
        let seconds = UInt64(clamping: seconds.addingReportingOverflow(extra).partialValue)
        let millis = seconds.multipliedReportingOverflow(by: 1000)
        guard !millis.overflow else { return .max }
        let total = millis.partialValue.addingReportingOverflow(UInt64(clamping: nanoseconds / 1_000_000))
        return total.overflow ? .max : total.partialValue
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UTCTimestamp {
    /// The system clock (CLOCK_REALTIME) now.
    public static func now() -> UTCTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UTCTimestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
    }
}
