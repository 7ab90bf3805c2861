import Configuration
import GeoAttrCore

/// What a configuration key is, beyond its name: built by the helpers below for the common
/// shapes (a switch, seconds, a number in a range, a path, a named choice, an octal mode), by
/// `custom` for the rest.
struct KeyDeclaration {
    var type: ConfigType
    var flag: String?
    var applied: ConfigurationKey.Applied
    var read: (ConfigReader, ConfigurationKey, inout DaemonConfiguration) throws -> Void
    var effective: (DaemonConfiguration) -> String?

    static func custom(
        _ type: ConfigType, flag: String? = nil, _ applied: ConfigurationKey.Applied,
        read: @escaping (ConfigReader, ConfigurationKey, inout DaemonConfiguration) throws -> Void,
        effective: @escaping (DaemonConfiguration) -> String?
    ) -> KeyDeclaration {
        KeyDeclaration(type: type, flag: flag, applied: applied, read: read, effective: effective)
    }

    static func bool(_ path: WritableKeyPath<DaemonConfiguration, Bool>, _ applied: ConfigurationKey.Applied) -> KeyDeclaration {
        custom(
            .bool, applied,
            read: { reader, key, configuration in
                configuration[keyPath: path] = reader.bool(forKey: key.configKey, default: configuration[keyPath: path])
            },
            effective: { "\($0[keyPath: path])" })
    }

    /// A duration in seconds, at least `minimum`, at most ten years; kept to the millisecond.
    static func seconds(
        _ path: WritableKeyPath<DaemonConfiguration, Duration>, minimum: Double, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        custom(
            .double, applied,
            read: { reader, key, configuration in
                let seconds = reader.double(forKey: key.configKey, default: configuration[keyPath: path].secondsValue)
                guard seconds.isFinite, seconds >= minimum, seconds <= 10 * 365 * 86_400 else {
                    throw ConfigurationError(key: key.name, problem: "expected seconds, at least \(minimum); got \(seconds)")
                }
                configuration[keyPath: path] = .milliseconds(Int64((seconds * 1000).rounded()))
            },
            effective: { EffectiveValue.number($0[keyPath: path].secondsValue) })
    }

    /// A number above 0.
    static func positive(_ path: WritableKeyPath<DaemonConfiguration, Double>, _ applied: ConfigurationKey.Applied) -> KeyDeclaration {
        custom(
            .double, applied,
            read: { reader, key, configuration in
                let number = reader.double(forKey: key.configKey, default: configuration[keyPath: path])
                guard number.isFinite, number > 0 else {
                    throw ConfigurationError(key: key.name, problem: "expected a number above 0; got \(number)")
                }
                configuration[keyPath: path] = number
            },
            effective: { EffectiveValue.number($0[keyPath: path]) })
    }

    /// A whole number within `range`.
    static func int(
        _ path: WritableKeyPath<DaemonConfiguration, Int>, _ range: ClosedRange<Int>, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        custom(
            .int, applied,
            read: { reader, key, configuration in
                let number = reader.int(forKey: key.configKey, default: configuration[keyPath: path])
                guard range.contains(number) else {
                    throw ConfigurationError(key: key.name, problem: "expected \(range.lowerBound) to \(range.upperBound); got \(number)")
                }
                configuration[keyPath: path] = number
            },
            effective: { "\($0[keyPath: path])" })
    }

    /// An absolute path, without a trailing slash.
    static func path(
        _ path: WritableKeyPath<DaemonConfiguration, String>, flag: String? = nil, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        custom(
            .string, flag: flag, applied,
            read: { reader, key, configuration in
                configuration[keyPath: path] = try absolutePath(reader.string(forKey: key.configKey, default: configuration[keyPath: path]), key)
            },
            effective: { $0[keyPath: path] })
    }

    /// An absolute path, or empty (or absent) for none.
    static func optionalPath(
        _ path: WritableKeyPath<DaemonConfiguration, String?>, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        custom(
            .string, applied,
            read: { reader, key, configuration in
                guard let text = reader.string(forKey: key.configKey), !text.isEmpty else { return }
                configuration[keyPath: path] = try absolutePath(text, key)
            },
            effective: { $0[keyPath: path] ?? "" })
    }

    /// One of a type's names (`foreground`, `info`, ...); `expected` lists them for the error.
    static func choice<Value: RawRepresentable<String>>(
        _ path: WritableKeyPath<DaemonConfiguration, Value>, flag: String? = nil, expected: String,
        _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        custom(
            .string, flag: flag, applied,
            read: { reader, key, configuration in
                let text = reader.string(forKey: key.configKey, default: configuration[keyPath: path].rawValue)
                guard let value = Value(rawValue: text) else {
                    throw ConfigurationError(key: key.name, problem: "expected \(expected); got '\(text)'")
                }
                configuration[keyPath: path] = value
            },
            effective: { $0[keyPath: path].rawValue })
    }

    /// A file mode in octal (`example` shows one).
    static func octalMode(
        _ path: WritableKeyPath<DaemonConfiguration, UInt32>, example: String, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        custom(
            .string, applied,
            read: { reader, key, configuration in
                let text = reader.string(forKey: key.configKey, default: "0" + String(configuration[keyPath: path], radix: 8))
                guard let mode = UInt32(text, radix: 8), mode <= 0o777 else {
                    throw ConfigurationError(key: key.name, problem: "expected an octal file mode like \(example); got '\(text)'")
                }
                configuration[keyPath: path] = mode
            },
            effective: { "0" + String($0[keyPath: path], radix: 8) })
    }

    /// A coordinate of the static location: read when set; printed only when the location is
    /// complete (a part without the rest is refused by `ConfigurationChecks`).
    static func staticCoordinate(_ path: WritableKeyPath<DaemonConfiguration, Double?>) -> KeyDeclaration {
        custom(
            .double, .reload,
            read: { reader, key, configuration in configuration[keyPath: path] = reader.double(forKey: key.configKey) },
            effective: { configuration in
                guard configuration.staticLocation != nil else { return nil }
                return configuration[keyPath: path].map { "\($0)" }
            })
    }

    /// The precision levels, most precise first, as an error lists them.
    static let levelNames = "exact, postal, locality, region, country or none"

    static func absolutePath(_ path: String, _ key: ConfigurationKey) throws -> String {
        guard path.hasPrefix("/"), !path.contains("\0"), path.count > 1 else {
            throw ConfigurationError(key: key.name, problem: "expected an absolute path; got '\(path)'")
        }
        return path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}

/// How `--check-config` writes numbers.
enum EffectiveValue {
    /// Whole numbers without a fraction; any other (and any beyond 1e15, which a whole-number
    /// conversion would trap on from 2^63: fix.fallback_error_m 1e60 is a valid setting) as is.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A list as `[a, b]`.
    static func list(_ items: [some CustomStringConvertible]) -> String {
        "[" + items.map(\.description).joined(separator: ", ") + "]"
    }
}
