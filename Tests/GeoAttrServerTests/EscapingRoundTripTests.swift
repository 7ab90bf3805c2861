import Foundation
import GeoAttrCore
@testable import GeoAttrModel
import GeoPlaces
import Testing
import TestSupport

@testable import GeoAttrServer

/// The env and Prometheus encoders against the escaping corpus (TestSupport's `EscapingCorpus`):
/// each value must come back exactly from the format's real reader, once normalised as
/// clients.md defines (control characters removed from env values, which an environment cannot
/// carry). systemd, python-dotenv and the OpenTelemetry SDK read the same corpus outside Swift
/// (scripts/systemd-test.sh, Tests/consumers).
@Suite("escaping round trips")
struct EscapingRoundTripTests {
    @Test("the env file, sourced by bash and by dash, gives back every value exactly", arguments: ["/bin/bash", "/bin/dash"])
    func envRoundTrip(shell: String) async throws {
        let values = EscapingCorpus.values(count: 400, seed: 0x656E_76)
        var attributes: [String: AttributeValue] = [:]
        for (index, value) in values.enumerated() { attributes["t.v\(index)"] = .string(value) }
        let directory = try TemporaryDirectory(prefix: "escaping")
        let file = try directory.write(GeoVariables.text(attributes), to: "geo.env")
        // Each value between two markers, so that leading and trailing spaces count.
        let printing = values.indices.map { "printf '<%s>\\n' \"$T_V\($0)\"" }.joined(separator: "\n")
        let script = try directory.write(". \"$1\"\n\(printing)\n", to: "print.sh")
        let result = try await CommandResult.run(shell, [script, file])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == values.count)
        var mismatches = 0
        for (line, value) in zip(lines, values) where String(line) != "<\(EscapingCorpus.envNormalised(value))>" {
            mismatches += 1
            if mismatches <= 3 { Issue.record("\(shell) read \(line.debugDescription) for \(value.debugDescription)") }
        }
        #expect(mismatches == 0)
    }

    /// Places whose every field is a corpus value, five values to a place.
    static func places(count: Int, seed: UInt64) -> [GeoPlace] {
        let values = EscapingCorpus.values(count: count * 5 - EscapingCorpus.shapes.count, seed: seed)
        return stride(from: 0, to: values.count - 4, by: 5).map {
            GeoPlace(
                countryCode: values[$0], regionCode: values[$0 + 1], localityName: values[$0 + 2], postalCode: values[$0 + 3],
                continentCode: values[$0 + 4])
        }
    }

    static func prometheusText(_ place: GeoPlace) -> String {
        var result = LocationResult.sample()
        result.place = place
        let view = AttributeView(
            served: ServedResult(result: result, obtainedAt: .now), grant: Grant(level: .exact), ttl: .seconds(60), state: .foreground)
        return PrometheusLocation.text(view.answer)
    }

    /// Debian's python3-prometheus-client (installed by scripts/install-deps.sh), not the Python
    /// first on PATH, which may not see Debian's modules.
    static let prometheusParser = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        texts = json.load(open(sys.argv[1], encoding="utf-8"))
        out = []
        for text in texts:
            family = next(f for f in text_string_to_metric_families(text) if f.name == "geoattrd_location_info")
            out.append(family.samples[0].labels)
        json.dump(out, open(sys.argv[2], "w", encoding="utf-8"))
        """

    @Test("the location's labels, parsed by prometheus_client, give back every value exactly")
    func prometheusLabelsRoundTrip() async throws {
        let places = Self.places(count: 100, seed: 0x7072_6F6D)
        let directory = try TemporaryDirectory(prefix: "escaping")
        let texts = places.map(Self.prometheusText)
        let input = directory.file("texts.json")
        try JSONEncoder().encode(texts).write(to: URL(fileURLWithPath: input))
        let script = try directory.write(Self.prometheusParser, to: "parse.py")
        let result = try await CommandResult.run("/usr/bin/python3", [script, input, directory.file("labels.json")])
        #expect(result.status == 0, "\(result.stderr)")
        let parsed = try JSONDecoder().decode([[String: String]].self, from: Data(contentsOf: URL(fileURLWithPath: directory.file("labels.json"))))
        #expect(parsed.count == places.count)
        var compared = 0
        var mismatches = 0
        for (labels, place) in zip(parsed, places) {
            for attribute in PlaceAttribute.allCases {
                let label = attribute.name.replacingOccurrences(of: ".", with: "_")
                compared += 1
                if labels[label] != attribute.value(in: place) {
                    mismatches += 1
                    if mismatches <= 3 {
                        Issue.record("prometheus_client read \(String(describing: labels[label]).debugDescription) for \(String(describing: attribute.value(in: place)).debugDescription)")
                    }
                }
            }
        }
        #expect(compared == places.count * PlaceAttribute.allCases.count)
        #expect(mismatches == 0)
    }

    @Test("promtool check metrics parses the location's labels of every corpus place")
    func promtoolAcceptsLabels() async throws {
        // One family holding each place's info line as rendered, so that one promtool run parses
        // every label value with Prometheus's own parser.
        let lines = Self.places(count: 100, seed: 0x7072_6F6D).map { place in
            Self.prometheusText(place).unicodeScalars.split(separator: "\n")
                .map { String(String.UnicodeScalarView($0)) }
                .filter { $0.hasPrefix("geoattrd_location_info{") }
        }
        #expect(lines.allSatisfy { $0.count == 1 })
        let help = "# HELP geoattrd_location_info The place of the served location, as labels; always 1.\n"
        let text = help + "# TYPE geoattrd_location_info gauge\n" + lines.joined().map { $0 + "\n" }.joined()
        let directory = try TemporaryDirectory(prefix: "escaping")
        let file = try directory.write(text, to: "places.prom")
        let result = try await CommandResult.run("/bin/sh", ["-c", "promtool check metrics <\"$1\"", "sh", file])
        #expect(result.status == 0, "promtool: \(result.stdout.prefix(1000)) \(result.stderr.prefix(1000))")
    }

    @Test("the OTel format writes only unreserved characters, % and its separators")
    func otelAlphabet() {
        let values = EscapingCorpus.values(count: 400, seed: 0x6F74_656C)
        var attributes: [String: AttributeValue] = [:]
        for (index, value) in values.enumerated() { attributes["t.v\(index)"] = .string(value) }
        // Nothing in it that a shell, systemd or python-dotenv treats specially between double
        // quotes: the env file's OTEL_RESOURCE_ATTRIBUTES="..." line is read literally by all.
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=,".utf8)
        let text = OTelResourceAttributes.text(attributes)
        #expect(text.utf8.allSatisfy(allowed.contains))
        #expect(text.split(separator: ",").count == values.count)
    }

    @Test("a label value escapes the quote and backslash before a combining mark")
    func labelEscapesScalars() {
        #expect(PrometheusLocation.escapedLabel("a\"\u{301}b") == "a\\\"\u{301}b")
        #expect(PrometheusLocation.escapedLabel("\\\u{308}\n") == "\\\\\u{308}\\n")
    }

    @Test("the env file writes U+FFFD for a noncharacter, which systemd would refuse the whole file for")
    func envReplacesNoncharacters() throws {
        let noncharacters = ([0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF] as [UInt32]).compactMap { Unicode.Scalar($0) }
        #expect(noncharacters.count == 6)
        let value = String(String.UnicodeScalarView(noncharacters.flatMap { [$0, "a"] }))
        let line = GeoVariables.text(["geo.locality.name": .string(value)])
        #expect(line == "GEO_LOCALITY_NAME=\"" + String(repeating: "\u{FFFD}a", count: 6) + "\"\n")
        // The scalars either side of the range are letters, kept as they are.
        #expect(GeoVariables.text(["x": .string("\u{FDCF}\u{FDF0}")]) == "X=\"\u{FDCF}\u{FDF0}\"\n")
    }

    @Test("the env file escapes a backquote, dollar and quote before a combining mark")
    func envEscapesScalars() {
        let line = GeoVariables.text(["geo.locality.name": .string("`\u{301}$\u{301}\"\u{301}")])
        #expect(line == "GEO_LOCALITY_NAME=\"\\`\u{301}\\$\u{301}\\\"\u{301}\"\n")
    }
}
