import Foundation
import GeoAttrClient
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Output files are private until the operator says otherwise: a configuration that names the
/// files and nothing else (as one written before the level had a private default) gets the
/// country alone, in files its owner and group read.
@Suite("geoattrd output files by default")
struct OutputDefaultsTests {
    @Test("outputs without level or mode: the country alone, no coordinates, postal code, locality or region; mode 0640")
    func countryAndGroupOnlyByDefault() async throws {
        let fixture = try Fixture.build(postal: true)
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let (envFile, textfile) = (directory.file("geo.env"), directory.file("geo.prom"))
        // Bigcity, in region AA-N of country AA, postal code A-100.
        let daemon = try DaemonProcess(
            config: FollowerTests.config(latitude: 1.5, longitude: 1.0) + "outputs:\n  env_file: \(envFile)\n  prometheus_file: \(textfile)\n",
            arguments: ["--index", fixture.index], directory: directory)
        try await daemon.waitForGeneration()
        // The control: the API's root client sees the whole place.
        let served = try await GeoAttrClient(socketPath: daemon.socketPath).request("GET", "/v1/attributes?format=otel").text
        #expect(served.contains("geo.postal_code=A-100") && served.contains("geo.location.lat=1.5"), "\(served)")
        #expect(await eventually { (try? String(contentsOfFile: envFile, encoding: .utf8))?.contains("AA") == true })
        #expect(await eventually { (try? String(contentsOfFile: textfile, encoding: .utf8))?.contains("AA") == true })
        let env = try String(contentsOfFile: envFile, encoding: .utf8)
        let prom = try String(contentsOfFile: textfile, encoding: .utf8)
        // AA's time zone is its only one: it tells no more than the country.
        #expect(env == "OTEL_RESOURCE_ATTRIBUTES=\"geo.continent.code=EU,geo.country.iso_code=AA,geo.timezone=Test%2FAA\"\n", "\(env)")
        for text in [env, prom] {
            for finer in ["A-100", "Bigcity", "AA-N", "latitude", "longitude", "geo.location"] {
                #expect(!text.contains(finer), "an output file shows \(finer):\n\(text)")
            }
        }
        for path in [envFile, textfile] {
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o640, "\(path): mode \(String(info.st_mode & 0o777, radix: 8))")
        }
        #expect(await daemon.stop() == 0)
    }
}
