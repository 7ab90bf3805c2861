import Foundation
import GeoAttrModel
import TestSupport

// The escaping corpus rendered by geoattrd's own encoders, for the readers that run outside the
// Swift tests: systemd's EnvironmentFile= (scripts/systemd-test.sh), python-dotenv and the
// OpenTelemetry SDK (Tests/consumers). The encoders are the product's; this only lays out their
// output and the values each reader must give back. Not shipped.
//
//   escaping-corpus DIRECTORY [COUNT [SEED]]     (default: 400 and the seed of EscapingRoundTripTests)
//
// writes into DIRECTORY:
//   geo.env        the env format (`?format=env`) of attributes t.v0 ... (variables T_V0 ...)
//   env.expected   T_V0=VALUE, each NUL-terminated: the values an environment carries (normalised)
//   otel.txt       the OTel format (`?format=otel`, the env file's OTEL_RESOURCE_ATTRIBUTES) of
//                  the same attributes
//   cases.json     [{"key", "name", "value", "env"}]: each attribute, its variable, its value and
//                  what an environment carries of it

struct Case: Encodable {
    var key: String
    var name: String
    var value: String
    var env: String
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let directory = arguments.first, arguments.count <= 3 else {
    FileHandle.standardError.write(Data("usage: escaping-corpus DIRECTORY [COUNT [SEED]]\n".utf8))
    exit(2)
}
guard let count = arguments.count > 1 ? Int(arguments[1]) : 400, count >= 0,
    let seed = arguments.count > 2 ? UInt64(arguments[2]) : 0x656E_76
else {
    FileHandle.standardError.write(Data("escaping-corpus: COUNT and SEED are non-negative integers\n".utf8))
    exit(2)
}

let cases = EscapingCorpus.values(count: count, seed: seed).enumerated().map { index, value in
    Case(key: "t.v\(index)", name: "T_V\(index)", value: value, env: EscapingCorpus.envNormalised(value))
}
var attributes: [String: AttributeValue] = [:]
for item in cases { attributes[item.key] = .string(item.value) }

do {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try Data(GeoVariables.text(attributes).utf8).write(to: URL(fileURLWithPath: "\(directory)/geo.env"))
    try Data(cases.map { "\($0.name)=\($0.env)\0" }.joined().utf8).write(to: URL(fileURLWithPath: "\(directory)/env.expected"))
    try Data(OTelResourceAttributes.text(attributes).utf8).write(to: URL(fileURLWithPath: "\(directory)/otel.txt"))
    try JSONEncoder().encode(cases).write(to: URL(fileURLWithPath: "\(directory)/cases.json"))
} catch {
    FileHandle.standardError.write(Data("escaping-corpus: \(directory): \(error)\n".utf8))
    exit(1)
}
print("escaping-corpus: \(cases.count) values (\(EscapingCorpus.shapes.count) shapes, \(count) random, seed \(seed)) in \(directory)")
