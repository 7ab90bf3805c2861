import Configuration
import Testing

@testable import GeoAttrDaemonConfig

@Suite("the YAML configuration document, through libyaml")
struct YAMLDocumentTests {
    func document(_ text: String) throws -> YAMLDocument {
        try Array(text.utf8).withUnsafeBytes { try YAMLDocument(bytes: $0) }
    }

    func failure(_ text: String) -> String? {
        do {
            _ = try document(text)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("sections flatten to dotted keys, in the order written, with their lines")
    func flattening() throws {
        let parsed = try document("fix:\n  timeout_s: 60\n  min_mode: 3\naccess:\n  rules: [\"uid:1=country\", gid:2=none]\n")
        #expect(parsed.entries.map(\.key) == ["fix.timeout_s", "fix.min_mode", "access.rules"])
        #expect(parsed.entries.map(\.mark.line) == [2, 3, 5])
        guard case .sequence(let items) = parsed["access.rules"]?.value else {
            Issue.record("access.rules is not a list")
            return
        }
        #expect(items.map(\.text) == ["uid:1=country", "gid:2=none"])
    }

    @Test("an empty file, comments only, and a bare document marker hold no keys", arguments: ["", "# nothing\n\n", "---\n", "---\n...\n", "~\n"])
    func empty(text: String) throws {
        #expect(try document(text).entries.isEmpty)
    }

    @Test("null values are present without a value; a quoted ~ is a string")
    func nulls() throws {
        let parsed = try document("outputs:\nindex:\n  path:\nlog:\n  level: \"~\"\n")
        #expect(parsed["outputs"]?.value == .null)
        #expect(parsed["index.path"]?.value == .null)
        guard case .scalar(let scalar) = parsed["log.level"]?.value else {
            Issue.record("log.level is not a scalar")
            return
        }
        #expect(scalar.text == "~" && !scalar.isNull)
    }

    @Test("syntax errors give libyaml's problem with the line and column", arguments: [
        ("this is: [not yaml\n", "line 2, column 1: did not find expected ',' or ']'"),
        ("fix:\n  timeout_s: 5\n bad\n", "line 3, column"),
        ("fix:\n\ttimeout_s: 5\n", "line 2, column 1: found character that cannot start any token"),
        ("a: \"unterminated\n", "line 2, column 1: found unexpected end of stream"),
    ])
    func syntax(text: String, expected: String) {
        let message = failure(text)
        #expect(message?.contains(expected) == true, "\(message ?? "parsed")")
    }

    @Test("what a configuration cannot be is refused, with where", arguments: [
        ("- a\n- b\n", "line 1, column 1: expected sections like 'fix:' at the top level, found a list"),
        ("a: &x 1\nb: *x\n", "line 2, column 4: b: aliases (*name) are not supported"),
        ("access:\n  rules: [*x]\n", "aliases"),
        ("fix:\n  timeout_s: 5\nfix:\n  timeout_s: 6\n", "line 4, column 3: fix.timeout_s: given twice (first at line 2)"),
        ("access:\n  rules: [[a]]\n", "access.rules: a list may hold only values, found a list as item 1"),
        ("access:\n  rules:\n    - a\n    - {b: c}\n", "found a section as item 2"),
        ("? [a]\n: b\n", "a key must be a name, found a list"),
        ("a: 1\n---\nb: 2\n", "more than one document"),
        ("\"\": 1\n", "a key must be a name"),
    ])
    func structure(text: String, expected: String) {
        let message = failure(text)
        #expect(message?.contains(expected) == true, "\(message ?? "parsed")")
    }

    @Test("nesting deeper than the limit is refused, not recursed into")
    func depth() {
        let deep = (0..<40).map { String(repeating: "  ", count: $0) + "k\($0):" }.joined(separator: "\n") + " 1\n"
        #expect(failure(deep)?.contains("nested more than \(YAMLDocument.maximumDepth) deep") == true)
        let flow = String(repeating: "[", count: 10_000)
        #expect(failure("a: " + flow) != nil)
    }

    @Test("bytes that are not UTF-8 are refused with their offset")
    func encoding() {
        let bytes: [UInt8] = Array("log:\n  level: ".utf8) + [0xC3, 0x28] + Array("\n".utf8)
        let message = bytes.withUnsafeBytes { buffer -> String? in
            do {
                _ = try YAMLDocument(bytes: buffer)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(message == "byte 15: invalid trailing UTF-8 octet", "\(message ?? "parsed")")
    }
}

@Suite("scalars typed as the reader asks")
struct LibYAMLSnapshotTests {
    func value(_ text: String, as type: ConfigType) throws -> ConfigContent? {
        let snapshot = try LibYAMLSnapshot(data: Array("k:\n  v: \(text)\n".utf8).span.bytes, providerName: "test", parsingOptions: .default)
        return try snapshot.value(forKey: AbsoluteConfigKey(["k", "v"]), type: type).value?.content
    }

    @Test("whole numbers: decimal, signs, underscores, 0x, 0o; beyond 64 bits refused", arguments: [
        ("42", 42), ("-7", -7), ("+3", 3), ("1_000", 1000), ("0x1F", 31), ("0o17", 15),
        ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min),
    ])
    func integers(text: String, expected: Int) throws {
        #expect(try value(text, as: .int) == .int(expected))
    }

    @Test("not whole numbers", arguments: ["4.5", "lots", "9223372036854775808", "-9223372036854775809", "0x", "--1", "+-1", "\"\"", "1e3"])
    func notIntegers(text: String) {
        #expect(throws: YAMLValueError.self) { try value(text, as: .int) }
    }

    @Test("numbers: decimal and exponent forms, YAML's .inf and .nan; not Swift's own spellings")
    func doubles() throws {
        #expect(try value("2.5", as: .double) == .double(2.5))
        #expect(try value("1e60", as: .double) == .double(1e60))
        #expect(try value("10", as: .double) == .double(10))
        #expect(try value(".inf", as: .double) == .double(.infinity))
        #expect(try value("-.inf", as: .double) == .double(-.infinity))
        guard case .double(let nan) = try value(".nan", as: .double) else {
            Issue.record(".nan is not a number")
            return
        }
        #expect(nan.isNaN)
        for text in ["inf", "nan", "0x1p3", "lots", "1.2.3x"] {
            #expect(throws: YAMLValueError.self, "\(text)") { try value(text, as: .double) }
        }
    }

    @Test("booleans in YAML 1.1's spellings")
    func booleans() throws {
        for text in ["true", "True", "yes", "on", "ON"] { #expect(try value(text, as: .bool) == .bool(true), "\(text)") }
        for text in ["false", "FALSE", "no", "off"] { #expect(try value(text, as: .bool) == .bool(false), "\(text)") }
        #expect(throws: YAMLValueError.self) { try value("maybe", as: .bool) }
    }

    @Test("strings: any scalar; a list only where a list belongs, and no single value for one")
    func stringsAndLists() throws {
        #expect(try value("\"0660\"", as: .string) == .string("0660"))
        #expect(try value("60", as: .string) == .string("60"))
        #expect(try value("[a, b]", as: .stringArray) == .stringArray(["a", "b"]))
        #expect(try value("[]", as: .stringArray) == .stringArray([]))
        #expect(throws: YAMLValueError.self) { try value("[a]", as: .string) }
        #expect(throws: YAMLValueError.self) { try value("uid:1=country", as: .stringArray) }
        #expect(try value("", as: .string) == nil)
    }
}
