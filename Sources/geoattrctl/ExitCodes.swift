import ArgumentParser
import GeoAttrModel

/// The documented exit codes (sysexits.h values, so scripts can tell the cases apart).
enum ExitCodes {
    static let usage = ExitCode(64)
    static let gpsdUnreachable = ExitCode(69)
    static let systemResources = ExitCode(71)
    static let connectionLost = ExitCode(74)
    static let noFix = ExitCode(75)
    static let protocolError = ExitCode(76)
    static let forbidden = ExitCode(77)
    static let daemonUnreachable = ExitCode(69)
    /// The daemon refused the configuration a reload asked it to read.
    static let configurationRefused = ExitCode(78)

    static func code(for error: FixError) -> ExitCode {
        switch error {
        case .gpsdUnreachable: gpsdUnreachable
        case .connectionLost: connectionLost
        case .noFix, .timeout, .noSatellites, .cancelled: noFix
        case .systemResources: systemResources
        }
    }
}
