/// One line of `lookup --batch` input, parsed once for both the spatial order and the answer.
struct ParsedLine: Sendable {
    enum Kind: Sendable {
        case point
        case outOfRange
        case malformed
    }

    var kind: Kind
    /// NaN when the line is not a pair of numbers.
    var latitude: Double
    var longitude: Double
    /// Where the two numbers are in the input when both are JSON numbers already: the answer
    /// echoes them as written, saving the formatting of two doubles per line.
    var echo: (latitude: Range<Int>, longitude: Range<Int>)?
    /// The line without its newline and a trailing CR, for an error answer.
    var text: Range<Int>

    init(_ bytes: UnsafeBufferPointer<UInt8>, line: Range<Int>) {
        text = line
        if let last = line.last, bytes[last] == 0x0D { text = line.lowerBound..<last }
        guard let (latitude, longitude, latitudeText, longitudeText) = BatchLookup.parseCoordinates(bytes[text]) else {
            kind = .malformed
            self.latitude = .nan
            self.longitude = .nan
            echo = nil
            return
        }
        self.latitude = latitude
        self.longitude = longitude
        let inRange = latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
        kind = inRange ? .point : .outOfRange
        echo = PlaceJSON.isJSONNumber(latitudeText) && PlaceJSON.isJSONNumber(longitudeText)
            ? (latitudeText.startIndex..<latitudeText.endIndex, longitudeText.startIndex..<longitudeText.endIndex) : nil
    }
}
