#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import GeoIndexArrow

/// The back office's C interface (libgeoattrd_geocoder, what Python's ctypes calls): open a file
/// of the fuzzed bytes, look a batch of points up into Arrow buffers, free them, close. The first
/// byte is a mode, as in the index harness: bit 0 re-signs the file, bit 7 cuts it short after
/// the open (the lookup must then return 4, the file changed, when it read past the end, and
/// never crash). A batch of points of the fixture and the mode's own.
struct IndexArrowFuzz: FuzzHarness {
    let path = Scratch.path("fuzzed-arrow.gidx")

    init() throws {}

    func run(_ input: [UInt8]) {
        guard let (mode, bytes) = IndexReaderFuzz.writeFile(of: input, to: path) else { return }
        var message = [CChar](repeating: 0, count: 512)
        guard let handle = path.withCString({ geoattrdGeocoderOpen($0, &message, message.count) }) else { return }
        defer { geoattrdGeocoderClose(handle) }
        if mode & 0x80 != 0 { IndexReaderFuzz.shrink(path, of: bytes.count, mode: mode) }

        var latitudes = IndexReaderFuzz.points.map(\.latitude)
        var longitudes = IndexReaderFuzz.points.map(\.longitude)
        let steps = Double((mode & 0x7F) >> 1)
        latitudes += [-20 + steps * 0.33, .nan, 91]
        longitudes += [-3 + steps * 0.17, 1, -181]
        let columns = Int(geoattrdGeocoderColumnCount())
        var buffers = [UnsafeMutableRawPointer?](repeating: nil, count: 3 * columns)
        var sizes = [Int64](repeating: 0, count: 3 * columns)
        var nulls = [Int64](repeating: 0, count: columns)
        let status = geoattrdGeocoderLookup(handle, latitudes, longitudes, Int64(latitudes.count), &buffers, &sizes, &nulls)
        switch status {
        case 0:
            for (index, buffer) in buffers.enumerated() where buffer == nil && sizes[index] > 0 {
                fatalError("index-arrow harness: buffer \(index) is NULL with size \(sizes[index])")
            }
            for column in 0..<columns where nulls[column] < 0 || nulls[column] > Int64(latitudes.count) {
                fatalError("index-arrow harness: column \(column) has \(nulls[column]) nulls of \(latitudes.count)")
            }
        case 4 where mode & 0x80 != 0:
            break
        default:
            fatalError("index-arrow harness: lookup returned \(status)")
        }
        for buffer in buffers { geoattrdGeocoderFree(buffer) }
    }
}
