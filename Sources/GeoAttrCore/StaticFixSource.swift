public import GeoAttrModel

/// A configured, fixed location: installations without a receiver (like GeoClue's static source).
public struct StaticFixSource: FixSource {
    /// Why a static location cannot be used.
    public enum ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
        case implausiblePosition(latitude: Double, longitude: Double)
        case negativeError(Double)

        public var description: String {
            switch self {
            case .implausiblePosition(let latitude, let longitude):
                return "static location \(latitude), \(longitude) is not a position on Earth "
                    + "(latitude -90...90, longitude -180...180, not exactly 0,0)"
            case .negativeError(let value):
                return "static location accuracy must be 0 or more metres, got \(value)"
            }
        }
    }

    public let latitude: Double
    public let longitude: Double
    public let altitudeMeters: Double?
    public let horizontalErrorMeters: Double?

    public init(
        latitude: Double,
        longitude: Double,
        altitudeMeters: Double? = nil,
        horizontalErrorMeters: Double? = nil
    ) throws(ConfigurationError) {
        guard PositionValidity.isPlausible(latitude: latitude, longitude: longitude) else {
            throw .implausiblePosition(latitude: latitude, longitude: longitude)
        }
        if let error = horizontalErrorMeters, !(error >= 0) {
            throw .negativeError(error)
        }
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeMeters = altitudeMeters.flatMap { $0.isFinite ? $0 : nil }
        self.horizontalErrorMeters = horizontalErrorMeters
    }

    public func fix() async throws(FixError) -> Fix {
        if Task.isCancelled { throw .cancelled }
        return makeFix()
    }

    /// The configured location as a fix received now.
    public func makeFix() -> Fix {
        Fix(
            latitude: latitude,
            longitude: longitude,
            altitudeMeters: altitudeMeters,
            mode: altitudeMeters == nil ? .twoDimensional : .threeDimensional,
            horizontalErrorMeters: horizontalErrorMeters,
            receiverTime: nil,
            timeSource: .systemClock,
            receivedAt: .now(),
            timeToFixMilliseconds: 0,
            origin: .static
        )
    }
}
