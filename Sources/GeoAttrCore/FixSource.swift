public import GeoAttrModel

/// Something that can produce one position fix on request.
///
/// The daemon's scheduler talks only to this seam: gpsd and a static configured location are
/// the real implementations, and scheduler tests script their own.
public protocol FixSource: Sendable {
    /// Takes one fix. Cancelling the calling task ends the attempt and releases the receiver.
    func fix() async throws(FixError) -> Fix
}
