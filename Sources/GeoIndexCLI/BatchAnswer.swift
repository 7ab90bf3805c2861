import GeoIndex

extension BatchLookup {
    /// The answer to one line: the place as one line of JSON, or an error object naming the line.
    static func answer(
        _ line: ParsedLine, in bytes: UnsafeBufferPointer<UInt8>, lineNumber: Int, reader: GeoIndexReader, into out: inout [UInt8]
    ) {
        switch line.kind {
        case .point:
            let place = reader.place(latitude: line.latitude, longitude: line.longitude)
            if let echo = line.echo {
                PlaceJSON.append(place, latitudeText: bytes[echo.latitude], longitudeText: bytes[echo.longitude], to: &out)
            } else {
                PlaceJSON.append(place, latitude: line.latitude, longitude: line.longitude, to: &out)
            }
        case .outOfRange:
            PlaceJSON.appendError(
                "coordinates out of range (latitude -90..90, longitude -180..180)", line: lineNumber, input: bytes[line.text], to: &out)
        case .malformed:
            PlaceJSON.appendError("expected `lat,lon` with decimal degrees", line: lineNumber, input: bytes[line.text], to: &out)
        }
        out.append(0x0A)
    }
}
