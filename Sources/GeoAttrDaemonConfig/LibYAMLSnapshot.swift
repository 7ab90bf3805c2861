package import Configuration

/// A YAML configuration file as a swift-configuration snapshot, parsed by libyaml.
///
/// swift-configuration's own YAML snapshot brings Yams and with it full Foundation and ICU
/// (tens of megabytes on a device); this one needs only libyaml, which Debian ships as a
/// 130 KB library. Scalars are typed when a key is read, as the reader asks: `timeout_s: 60`
/// is a number for a number key and would be the string "60" for a string key.
package struct LibYAMLSnapshot: FileConfigSnapshot {
    package struct ParsingOptions: FileParsingOptions {
        package static var `default`: Self { Self() }

        package init() {}
    }

    package let providerName: String
    let document: YAMLDocument

    package init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        self.providerName = providerName
        document = try data.withUnsafeBytes { bytes throws(YAMLDocumentError) in try YAMLDocument(bytes: bytes) }
    }

    /// Every key in the file, dotted, in the order written, with where it was written.
    var keys: [(name: String, line: Int)] { document.entries.map { ($0.key, $0.mark.line) } }

    package func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = key.components.joined(separator: ".")
        guard let entry = document[name] else { return LookupResult(encodedKey: name, value: nil) }
        let content: ConfigContent
        switch entry.value {
        case .null:
            return LookupResult(encodedKey: name, value: nil)
        case .scalar(let scalar):
            content = try Self.convert(scalar, to: type)
        case .sequence(let items):
            guard type == .stringArray else { throw YAMLValueError(expected: type, found: "a list", mark: entry.mark) }
            content = .stringArray(items.map(\.text))
        }
        return LookupResult(encodedKey: name, value: ConfigValue(content, isSecret: false))
    }

    static func convert(_ scalar: YAMLDocument.Scalar, to type: ConfigType) throws(YAMLValueError) -> ConfigContent {
        func mismatch() -> YAMLValueError {
            YAMLValueError(expected: type, found: "'\(scalar.text.prefix(60))'", mark: scalar.mark)
        }
        switch type {
        case .string:
            return .string(scalar.text)
        case .int:
            guard let value = YAMLScalars.int(scalar.text) else { throw mismatch() }
            return .int(value)
        case .double:
            guard let value = YAMLScalars.double(scalar.text) else { throw mismatch() }
            return .double(value)
        case .bool:
            guard let value = YAMLScalars.bool(scalar.text) else { throw mismatch() }
            return .bool(value)
        case .stringArray:
            throw YAMLValueError(expected: type, found: "the single value '\(scalar.text.prefix(60))'", mark: scalar.mark)
        default:
            throw mismatch()
        }
    }

    package var description: String { "\(providerName)[\(document.entries.count) values]" }
    package var debugDescription: String {
        providerName + "[" + document.entries.map { "\($0.key)@\($0.mark.line)" }.joined(separator: ", ") + "]"
    }
}

/// A value of the wrong kind, with where it is.
struct YAMLValueError: Error, CustomStringConvertible {
    var expected: ConfigType
    var found: String
    var mark: YAMLDocument.Mark

    var problem: String { "expected \(ConfigurationFile.describe(expected)), found \(found)" }
    var description: String { "\(problem) (\(mark))" }
}

/// YAML 1.1's spellings of numbers and booleans, which libyaml (a YAML 1.1 parser) leaves to us.
enum YAMLScalars {
    static func int(_ text: String) -> Int? {
        var digits = text.filter { $0 != "_" }[...]
        var negative = false
        if let sign = digits.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        } else if digits.hasPrefix("0o") || digits.hasPrefix("0O") {
            radix = 8
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty, digits.first != "+", digits.first != "-" else { return nil }
        // Through the magnitude, so that Int.min parses and anything beyond is refused.
        guard let magnitude = UInt64(digits, radix: radix) else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int(Int64.min) : -Int(magnitude)
        }
        return Int(exactly: magnitude)
    }

    static func double(_ text: String) -> Double? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: break
        }
        if let whole = int(text) { return Double(whole) }
        // Decimal notation only: Swift would also read "inf", "nan" and hexadecimal floats.
        let allowed = Set("0123456789+-.eE_")
        guard !text.isEmpty, text.allSatisfy(allowed.contains) else { return nil }
        return Double(text.filter { $0 != "_" })
    }

    static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": false
        default: nil
        }
    }
}
