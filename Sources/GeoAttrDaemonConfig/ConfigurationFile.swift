import Configuration
import GeoAttrCore
import GeoAttrModel
import Synchronization

/// The YAML configuration file, read safely and checked against the known keys.
///
/// The bytes are read here, not by swift-configuration's `FileProvider`, which follows symbolic
/// links and would block on a FIFO planted at the path: only a regular file is read. The
/// snapshot is swift-configuration's own `YAMLSnapshot`, built from those bytes; its values are
/// handed to the reader as an in-memory provider, so precedence (flags, environment, file) is
/// unchanged.
enum ConfigurationFile {
    /// A file larger than this is not a configuration file.
    static let maximumSize = 1 << 20

    /// The file's values, by key. `explicit`: the user named the file, so it must exist.
    static func provider(path: String, explicit: Bool) throws(ConfigurationError) -> InMemoryProvider {
        let read: [UInt8]?
        do throws(FileBytes.ReadError) {
            read = try FileBytes.read(path, limit: maximumSize)
        } catch {
            throw ConfigurationError(key: "file \(path)", problem: error.description)
        }
        guard let bytes = read else {
            if explicit { throw ConfigurationError(key: "file \(path)", problem: "no such file") }
            return InMemoryProvider(name: path, values: [:])
        }
        // An empty file, or one with only comments, is an empty configuration (YAML calls it a
        // null document, not a mapping).
        if hasNoSettings(bytes) { return InMemoryProvider(name: path, values: [:]) }

        // The snapshot keeps its keys to itself; the secrets hook sees every one of them.
        let seen = Mutex<[String]>([])
        let options = YAMLSnapshot.ParsingOptions(secretsSpecifier: .dynamic { key, _ in
            seen.withLock { $0.append(key) }
            return false
        })
        let snapshot: YAMLSnapshot
        do {
            snapshot = try YAMLSnapshot(data: bytes.span.bytes, providerName: path, parsingOptions: options)
        } catch {
            throw ConfigurationError(key: "file \(path)", problem: "\(error)")
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for name in seen.withLock({ $0 }).sorted() {
            guard let key = ConfigurationKeys.byName[name] else {
                // A section whose keys are all commented out (`outputs:` alone) is empty, not a key.
                if isEmptySection(name, in: snapshot) { continue }
                throw ConfigurationKeys.unknown(name)
            }
            let lookup: LookupResult
            do {
                lookup = try snapshot.value(forKey: AbsoluteConfigKey(key.components), type: key.type)
            } catch {
                throw ConfigurationError(key: name, problem: "expected \(describe(key.type)); \(error)")
            }
            if let value = lookup.value { values[AbsoluteConfigKey(key.components)] = value }
        }
        return InMemoryProvider(name: path, values: values)
    }

    static func isEmptySection(_ name: String, in snapshot: YAMLSnapshot) -> Bool {
        guard ConfigurationKeys.all.contains(where: { $0.name.hasPrefix(name + ".") }),
            let lookup = try? snapshot.value(forKey: AbsoluteConfigKey(name.split(separator: ".").map(String.init)), type: .string)
        else { return false }
        guard case .string(let text) = lookup.value?.content else { return lookup.value == nil }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// Whether the text holds nothing but comments, blank lines and document markers.
    static func hasNoSettings(_ bytes: [UInt8]) -> Bool {
        // Line by line up to the first setting: a real file has one within a few lines.
        var rest = Substring(String(decoding: bytes, as: UTF8.self))
        while !rest.isEmpty {
            let end = rest.firstIndex(where: \.isNewline) ?? rest.endIndex
            let trimmed = rest[..<end].trimmingWhitespace()
            guard trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed == "---" else { return false }
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
        }
        return true
    }

    static func describe(_ type: ConfigType) -> String {
        switch type {
        case .bool: "true or false"
        case .int: "a whole number"
        case .double: "a number"
        case .string: "a string"
        case .stringArray: "a list of strings, like [\"uid:1001=country\"]"
        default: "\(type.rawValue)"
        }
    }
}
