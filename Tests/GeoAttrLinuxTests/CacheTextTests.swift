import Foundation
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import GeoPlaces
import Testing
import TestSupport

/// The place's text through the cache file: a result served after a restart comes from it, so
/// every value must come back as it was saved.
@Suite("the cache file's text")
struct CacheTextTests {
    @Test("every corpus value comes back from the cache file exactly, controls and NUL included")
    func corpusRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        let values = EscapingCorpus.values(count: 176, seed: 0x6361_6368)
        var compared = 0
        for start in stride(from: 0, to: values.count - 4, by: 5) {
            var result = LocationResult.sample()
            result.place = GeoPlace(
                countryCode: values[start], regionCode: values[start + 1], localityName: values[start + 2], postalCode: values[start + 3],
                continentCode: values[start + 4])
            try cache.save(result)
            let loaded = try cache.load()
            #expect(loaded == result, "\(String(describing: result.place))")
            compared += 5
        }
        #expect(compared == values.count)
    }

    /// geoattrd writes the cache with JSONEncoder, always valid; text that is not Unicode means the
    /// file was damaged or written by something else, and it is set aside like any corrupt cache
    /// rather than served with U+FFFD.
    @Test(
        "a cache whose place is not Unicode is set aside as corrupt",
        arguments: [[0xED, 0xA0, 0x80], [0xC0, 0x80], [0xFF], Array(#"\ud800"#.utf8), Array(#"\udc00x"#.utf8)] as [[UInt8]])
    func invalidTextIsSetAside(bytes: [UInt8]) throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        try cache.save(LocationResult.sample())
        var data = Array(try Data(contentsOf: URL(fileURLWithPath: cache.path)))
        let name = Array("Brussels".utf8)
        let at = (0...(data.count - name.count)).first { data[$0..<($0 + name.count)].elementsEqual(name) }
        #expect(at != nil)
        guard let at else { return }
        data.replaceSubrange(at..<(at + name.count), with: bytes)
        try Data(data).write(to: URL(fileURLWithPath: cache.path))
        expectSetAside(cache)
    }
}
