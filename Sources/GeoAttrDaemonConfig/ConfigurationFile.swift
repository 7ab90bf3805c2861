import Configuration
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel

/// The YAML configuration file, read safely and checked against the known keys.
///
/// The bytes are read here, not by swift-configuration's `FileProvider`, which follows symbolic
/// links and would block on a FIFO planted at the path: only a regular file is read. libyaml
/// parses them into a `LibYAMLSnapshot`, whose values for the known keys are handed to the
/// reader as an in-memory provider, so precedence (flags, environment, file) is unchanged.
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
        return try provider(bytes: bytes, path: path)
    }

    /// The values of a file's bytes, by key: every key known, every value of its key's type.
    static func provider(bytes: [UInt8], path: String) throws(ConfigurationError) -> InMemoryProvider {
        let snapshot: LibYAMLSnapshot
        do {
            snapshot = try LibYAMLSnapshot(data: bytes.span.bytes, providerName: path, parsingOptions: .default)
        } catch {
            throw ConfigurationError(key: "file \(path)", problem: "\(error)")
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (name, line) in snapshot.keys {
            guard let key = ConfigurationKeys.byName[name] else {
                // A section whose keys are all commented out (`outputs:` alone) is empty, not a key.
                if isSection(name), snapshot.document[name]?.value == .null { continue }
                var error = ConfigurationKeys.unknown(name)
                error.problem += " (\(path) line \(line))"
                throw error
            }
            let lookup: LookupResult
            do {
                lookup = try snapshot.value(forKey: AbsoluteConfigKey(key.components), type: key.type)
            } catch let error as YAMLValueError {
                throw ConfigurationError(key: name, problem: "\(error.problem) (\(path) \(error.mark))")
            } catch {
                throw ConfigurationError(key: name, problem: "\(error)")
            }
            if let value = lookup.value { values[AbsoluteConfigKey(key.components)] = value }
        }
        return InMemoryProvider(name: path, values: values)
    }

    static func isSection(_ name: String) -> Bool {
        ConfigurationKeys.all.contains { $0.name.hasPrefix(name + ".") }
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
