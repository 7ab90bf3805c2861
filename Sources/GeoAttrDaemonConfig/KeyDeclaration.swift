import Configuration
import GeoAttrCore

/// What a configuration key is, beyond its name: built by `checked` for a value read, checked
/// and stored (the helpers below are its common shapes: a switch, seconds, a number above 0, a
/// number in a range, a path, a named choice, an octal mode, a list), by `custom` for the rest.
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

    /// A value read from the sources as `Raw` (the setting's current value standing as the
    /// default), made the setting by `convert`; `nil` refuses it with `problem`'s sentence.
    static func checked<Raw, Value>(
        _ type: ConfigType, _ path: WritableKeyPath<DaemonConfiguration, Value>, flag: String? = nil,
        _ applied: ConfigurationKey.Applied,
        read raw: @escaping (ConfigReader, ConfigKey, Value) -> Raw,
        convert: @escaping (Raw) -> Value?, problem: @escaping (Raw) -> String,
        effective: @escaping (Value) -> String
    ) -> KeyDeclaration {
        custom(
            type, flag: flag, applied,
            read: { reader, key, configuration in
                let value = raw(reader, key.configKey, configuration[keyPath: path])
                guard let converted = convert(value) else { throw ConfigurationError(key: key.name, problem: problem(value)) }
                configuration[keyPath: path] = converted
            },
            effective: { effective($0[keyPath: path]) })
    }

    static func bool(_ path: WritableKeyPath<DaemonConfiguration, Bool>, _ applied: ConfigurationKey.Applied) -> KeyDeclaration {
        checked(
            .bool, path, applied, read: { $0.bool(forKey: $1, default: $2) }, convert: { $0 }, problem: { _ in "" },
            effective: { "\($0)" })
    }

    /// A duration in seconds within `range` (by default at least `minimum`, at most ten years),
    /// kept to the millisecond.
    static func seconds(
        _ path: WritableKeyPath<DaemonConfiguration, Duration>, minimum: Double, maximum: Double = 10 * 365 * 86_400,
        problem: String? = nil, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        checked(
            .double, path, applied, read: { $0.double(forKey: $1, default: $2.secondsValue) },
            convert: { seconds in
                guard seconds.isFinite, seconds >= minimum, seconds <= maximum else { return nil }
                return .milliseconds(Int64((seconds * 1000).rounded()))
            },
            problem: { "\(problem ?? "expected seconds, at least \(minimum)"); got \($0)" },
            effective: { EffectiveValue.number($0.secondsValue) })
    }

    /// A finite number accepted by `isValid`; `expected` says which.
    static func number(
        _ path: WritableKeyPath<DaemonConfiguration, Double>, expected: String, _ applied: ConfigurationKey.Applied,
        isValid: @escaping (Double) -> Bool
    ) -> KeyDeclaration {
        checked(
            .double, path, applied, read: { $0.double(forKey: $1, default: $2) },
            convert: { $0.isFinite && isValid($0) ? $0 : nil }, problem: { "expected \(expected); got \($0)" },
            effective: { EffectiveValue.number($0) })
    }

    /// A number above 0.
    static func positive(_ path: WritableKeyPath<DaemonConfiguration, Double>, _ applied: ConfigurationKey.Applied) -> KeyDeclaration {
        number(path, expected: "a number above 0", applied) { $0 > 0 }
    }

    /// A whole number within `range`.
    static func int(
        _ path: WritableKeyPath<DaemonConfiguration, Int>, _ range: ClosedRange<Int>, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        checked(
            .int, path, applied, read: { $0.int(forKey: $1, default: $2) }, convert: { range.contains($0) ? $0 : nil },
            problem: { "expected \(range.lowerBound) to \(range.upperBound); got \($0)" }, effective: { "\($0)" })
    }

    /// An absolute path, without a trailing slash.
    static func path(
        _ path: WritableKeyPath<DaemonConfiguration, String>, flag: String? = nil, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        checked(
            .string, path, flag: flag, applied, read: { $0.string(forKey: $1, default: $2) }, convert: absolutePath,
            problem: { "expected an absolute path; got '\($0)'" }, effective: { $0 })
    }

    /// An absolute path, or empty (or absent) for none; `empty` stands for none in the setting.
    static func optionalPath<Value>(
        _ path: WritableKeyPath<DaemonConfiguration, Value>, flag: String? = nil, _ applied: ConfigurationKey.Applied,
        empty: Value, wrap: @escaping (String) -> Value, unwrap: @escaping (Value) -> String
    ) -> KeyDeclaration {
        checked(
            .string, path, flag: flag, applied, read: { $0.string(forKey: $1) ?? unwrap($2) },
            convert: { $0.isEmpty ? empty : absolutePath($0).map(wrap) },
            problem: { "expected an absolute path; got '\($0)'" }, effective: unwrap)
    }

    /// An absolute path, or empty (or absent) for none.
    static func optionalPath(_ path: WritableKeyPath<DaemonConfiguration, String?>, _ applied: ConfigurationKey.Applied) -> KeyDeclaration {
        optionalPath(path, applied, empty: nil, wrap: { $0 }, unwrap: { $0 ?? "" })
    }

    /// One of a type's names (`foreground`, `info`, ...); `expected` lists them for the error.
    static func choice<Value: RawRepresentable<String>>(
        _ path: WritableKeyPath<DaemonConfiguration, Value>, flag: String? = nil, expected: String,
        _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        checked(
            .string, path, flag: flag, applied, read: { $0.string(forKey: $1, default: $2.rawValue) },
            convert: { Value(rawValue: $0) }, problem: { "expected \(expected); got '\($0)'" }, effective: \.rawValue)
    }

    /// A file mode in octal (`example` shows one).
    static func octalMode(
        _ path: WritableKeyPath<DaemonConfiguration, UInt32>, example: String, _ applied: ConfigurationKey.Applied
    ) -> KeyDeclaration {
        checked(
            .string, path, applied, read: { $0.string(forKey: $1, default: "0" + String($2, radix: 8)) },
            convert: { text in UInt32(text, radix: 8).flatMap { $0 <= 0o777 ? $0 : nil } },
            problem: { "expected an octal file mode like \(example); got '\($0)'" }, effective: { "0" + String($0, radix: 8) })
    }

    /// A list of items, each parsed alone; `problem` says what is wrong with one.
    static func list<Item: CustomStringConvertible>(
        _ path: WritableKeyPath<DaemonConfiguration, [Item]>, _ applied: ConfigurationKey.Applied,
        parse: @escaping (String) throws -> Item, problem: @escaping (String, any Error) -> String
    ) -> KeyDeclaration {
        custom(
            .stringArray, applied,
            read: { reader, key, configuration in
                for text in reader.stringArray(forKey: key.configKey, default: []) {
                    do {
                        configuration[keyPath: path].append(try parse(text))
                    } catch {
                        throw ConfigurationError(key: key.name, problem: problem(text, error))
                    }
                }
            },
            effective: { EffectiveValue.list($0[keyPath: path]) })
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

    static func absolutePath(_ path: String) -> String? {
        guard path.hasPrefix("/"), !path.contains("\0"), path.count > 1 else { return nil }
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
