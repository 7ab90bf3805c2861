#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeoIndex

// The C interface of libgeoattrd_geocoder, for the languages that load a shared library (Python's
// ctypes in geoattrd_geocoder): the reader geoattrd and geoattrctl use, behind plain C types.
// docs/backoffice.md describes each function; every pointer a caller passes may be NULL, and a
// NULL or short argument is an error code, never a crash.

/// The index format this library reads (`IndexFormat.version`).
@_cdecl("geoattrd_geocoder_index_format")
public func geoattrdGeocoderIndexFormat() -> UInt32 {
    IndexFormat.version
}

/// Opens and checks the index at `path`. NULL when it cannot be used; then `message` (of
/// `capacity` bytes) holds why, naming the file and, for another format, both formats.
@_cdecl("geoattrd_geocoder_open")
public func geoattrdGeocoderOpen(
    _ path: UnsafePointer<CChar>?, _ message: UnsafeMutablePointer<CChar>?, _ capacity: Int
) -> UnsafeMutableRawPointer? {
    guard let path else {
        write("no index path given", to: message, capacity: capacity)
        return nil
    }
    do {
        let reader = try GeoIndexReader(path: String(cString: path))
        return Unmanaged.passRetained(GeocoderHandle(reader: reader)).toOpaque()
    } catch {
        write(error.description, to: message, capacity: capacity)
        return nil
    }
}

/// Releases what `geoattrd_geocoder_open` returned (the mapping goes with the last handle).
@_cdecl("geoattrd_geocoder_close")
public func geoattrdGeocoderClose(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<GeocoderHandle>.fromOpaque(handle).release()
}

/// How many columns a lookup returns.
@_cdecl("geoattrd_geocoder_column_count")
public func geoattrdGeocoderColumnCount() -> Int32 {
    Int32(GeocoderHandle.columnNames.count)
}

/// Writes column `index`'s name, NUL-terminated, into `name` (`capacity` bytes); returns its
/// length, or -1 for no such column.
@_cdecl("geoattrd_geocoder_column_name")
public func geoattrdGeocoderColumnName(_ index: Int32, _ name: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int32 {
    guard index >= 0, Int(index) < GeocoderHandle.columnNames.count else { return -1 }
    let text = GeocoderHandle.columnNames[Int(index)]
    write(text, to: name, capacity: capacity)
    return Int32(text.utf8.count)
}

/// Looks up `count` points. For each column c, `buffers[3c]`, `[3c+1]` and `[3c+2]` receive
/// its validity bitmap, int32 offsets and UTF-8 data in Arrow's layout, `sizes` the same three
/// sizes in bytes and `null_counts[c]` its nulls. Each buffer is the caller's, to release with
/// `geoattrd_geocoder_free`. Returns 0; 1 for a NULL argument or a negative count; 2 when a
/// column would pass 2 GiB (look up fewer points at once); 3 when memory ran out; 4 when the
/// index file shrank under its mapping, or was written, since it was opened (nothing is
/// returned, and every later lookup through this handle returns 4: close it and open the file
/// again once it is whole).
@_cdecl("geoattrd_geocoder_lookup")
public func geoattrdGeocoderLookup(
    _ handle: UnsafeMutableRawPointer?, _ latitudes: UnsafePointer<Double>?, _ longitudes: UnsafePointer<Double>?,
    _ count: Int64, _ buffers: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ sizes: UnsafeMutablePointer<Int64>?,
    _ nullCounts: UnsafeMutablePointer<Int64>?
) -> Int32 {
    guard let handle, let buffers, let sizes, let nullCounts, count >= 0, count <= Int64(Int32.max) else { return 1 }
    guard count == 0 || (latitudes != nil && longitudes != nil) else { return 1 }
    let geocoder = Unmanaged<GeocoderHandle>.fromOpaque(handle).takeUnretainedValue()
    let points = Int(count)
    guard
        let columns = geocoder.lookup(
            latitudes: UnsafeBufferPointer(start: latitudes, count: points),
            longitudes: UnsafeBufferPointer(start: longitudes, count: points))
    else { return 2 }
    // Answers read from a file that changed under its mapping may be zeros: none is returned.
    guard geocoder.reader.isIntact else { return 4 }
    var exported: [(pointer: UnsafeMutableRawPointer?, size: Int)] = []
    for column in columns { exported += column.export() }
    guard exported.allSatisfy({ $0.pointer != nil }) else {
        for buffer in exported { free(buffer.pointer) }
        return 3
    }
    for (index, buffer) in exported.enumerated() {
        buffers[index] = buffer.pointer
        sizes[index] = Int64(buffer.size)
    }
    for (index, column) in columns.enumerated() { nullCounts[index] = Int64(column.nullCount) }
    return 0
}

/// Releases a buffer `geoattrd_geocoder_lookup` returned.
@_cdecl("geoattrd_geocoder_free")
public func geoattrdGeocoderFree(_ buffer: UnsafeMutableRawPointer?) {
    free(buffer)
}

/// `text` as a NUL-terminated C string in `buffer`, cut at `capacity - 1` bytes.
private func write(_ text: String, to buffer: UnsafeMutablePointer<CChar>?, capacity: Int) {
    guard let buffer, capacity > 0 else { return }
    var text = text
    text.withUTF8 { bytes in
        let length = min(bytes.count, capacity - 1)
        for index in 0..<length { buffer[index] = CChar(bitPattern: bytes[index]) }
        buffer[length] = 0
    }
}
