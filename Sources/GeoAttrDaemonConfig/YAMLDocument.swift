internal import CYAML

/// A configuration file's YAML, as libyaml reads it, flattened to dotted keys
/// (`fix:` / `  timeout_s: 60` is `fix.timeout_s`).
///
/// Only what a configuration needs: a mapping of sections whose leaves are scalars or lists of
/// scalars. Aliases are refused rather than expanded (nothing here needs them, and expanding
/// them is how a small file becomes a large one), and so is a key given twice, which YAML
/// parsers resolve differently and a reader of the file would not expect.
struct YAMLDocument: Sendable {
    struct Mark: Sendable, Equatable, CustomStringConvertible {
        var line: Int
        var column: Int

        var description: String { "line \(line), column \(column)" }
    }

    struct Scalar: Sendable, Equatable {
        enum Style: Sendable, Equatable {
            case plain, quoted, block
        }

        var text: String
        var style: Style
        var mark: Mark

        /// YAML's null: an empty plain scalar, `~` or `null`.
        var isNull: Bool { style == .plain && ["", "~", "null", "Null", "NULL"].contains(text) }
    }

    enum Value: Sendable, Equatable {
        /// The key is there with no value (`path:`, `outputs:` with its keys commented out).
        case null
        case scalar(Scalar)
        case sequence([Scalar])
    }

    struct Entry: Sendable, Equatable {
        var key: String
        var value: Value
        var mark: Mark
    }

    /// Every key of the file, in the order written.
    private(set) var entries: [Entry] = []
    private var index: [String: Int] = [:]

    /// Deeper sections than this are no configuration (ours has two levels).
    static let maximumDepth = 16

    subscript(key: String) -> Entry? { index[key].map { entries[$0] } }

    init(bytes: UnsafeRawBufferPointer) throws(YAMLDocumentError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        guard let parser = CYAML_parser_create(base, bytes.count) else {
            throw .outOfMemory
        }
        defer { CYAML_parser_destroy(parser) }
        var events = EventReader(parser: parser)
        try read(&events)
    }

    private mutating func read(_ events: inout EventReader) throws(YAMLDocumentError) {
        _ = try events.next()  // stream start
        var documents = 0
        while true {
            let event = try events.next()
            switch event.kind {
            case .streamEnd:
                return
            case .documentStart:
                documents += 1
                guard documents == 1 else {
                    throw .structure(key: nil, problem: "more than one document (---) in one file", mark: event.mark)
                }
                try readRoot(&events)
                _ = try events.next()  // document end
            default:
                throw .structure(key: nil, problem: "unexpected \(event.kind)", mark: event.mark)
            }
        }
    }

    private mutating func readRoot(_ events: inout EventReader) throws(YAMLDocumentError) {
        let root = try events.next()
        switch root.kind {
        case .mappingStart:
            try readMapping(&events, prefix: "", depth: 1)
        case .scalar(let scalar) where scalar.isNull:
            return  // an empty file, or comments only
        case .alias:
            throw .structure(key: nil, problem: "aliases (*name) are not supported", mark: root.mark)
        default:
            throw .structure(key: nil, problem: "expected sections like 'fix:' at the top level, found \(root.kind)", mark: root.mark)
        }
    }

    private mutating func readMapping(_ events: inout EventReader, prefix: String, depth: Int) throws(YAMLDocumentError) {
        while true {
            let keyEvent = try events.next()
            let name: String
            switch keyEvent.kind {
            case .mappingEnd:
                return
            case .scalar(let scalar) where !scalar.text.isEmpty:
                name = scalar.text
            case .alias:
                throw .structure(key: prefix.isEmpty ? nil : prefix, problem: "aliases (*name) are not supported", mark: keyEvent.mark)
            default:
                throw .structure(key: prefix.isEmpty ? nil : prefix, problem: "a key must be a name, found \(keyEvent.kind)", mark: keyEvent.mark)
            }
            let key = prefix.isEmpty ? name : prefix + "." + name
            let valueEvent = try events.next()
            switch valueEvent.kind {
            case .scalar(let scalar):
                try add(Entry(key: key, value: scalar.isNull ? .null : .scalar(scalar), mark: keyEvent.mark))
            case .sequenceStart:
                try add(Entry(key: key, value: .sequence(try readSequence(&events, key: key)), mark: keyEvent.mark))
            case .mappingStart:
                guard depth < Self.maximumDepth else {
                    throw .structure(key: key, problem: "sections nested more than \(Self.maximumDepth) deep", mark: valueEvent.mark)
                }
                try readMapping(&events, prefix: key, depth: depth + 1)
            case .alias:
                throw .structure(key: key, problem: "aliases (*name) are not supported", mark: valueEvent.mark)
            default:
                throw .structure(key: key, problem: "unexpected \(valueEvent.kind)", mark: valueEvent.mark)
            }
        }
    }

    private func readSequence(_ events: inout EventReader, key: String) throws(YAMLDocumentError) -> [Scalar] {
        var items: [Scalar] = []
        while true {
            let event = try events.next()
            switch event.kind {
            case .sequenceEnd:
                return items
            case .scalar(let scalar):
                items.append(scalar)
            case .alias:
                throw .structure(key: key, problem: "aliases (*name) are not supported", mark: event.mark)
            default:
                throw .structure(key: key, problem: "a list may hold only values, found \(event.kind) as item \(items.count + 1)", mark: event.mark)
            }
        }
    }

    private mutating func add(_ entry: Entry) throws(YAMLDocumentError) {
        if let earlier = index[entry.key] {
            throw .structure(key: entry.key, problem: "given twice (first at line \(entries[earlier].mark.line))", mark: entry.mark)
        }
        index[entry.key] = entries.count
        entries.append(entry)
    }
}

/// Why a file is not a configuration document.
enum YAMLDocumentError: Error, CustomStringConvertible {
    /// libyaml's own words, where it stopped.
    case syntax(problem: String, context: String?, mark: YAMLDocument.Mark)
    /// Bytes that are not UTF-8 (or UTF-16 with a byte-order mark), at a byte offset.
    case encoding(problem: String, offset: Int)
    /// Valid YAML that is not a configuration: a list at the top, an alias, a key twice, ...
    case structure(key: String?, problem: String, mark: YAMLDocument.Mark)
    case outOfMemory

    var description: String {
        switch self {
        case .syntax(let problem, let context, let mark):
            "\(mark): \(problem)" + (context.map { " (\($0))" } ?? "")
        case .encoding(let problem, let offset):
            "byte \(offset): \(problem)"
        case .structure(let key, let problem, let mark):
            "\(mark): " + (key.map { "\($0): " } ?? "") + problem
        case .outOfMemory:
            "out of memory while reading the YAML"
        }
    }
}

/// libyaml's events, one at a time, copied out of the parser's buffers.
private struct EventReader {
    enum Kind: CustomStringConvertible {
        case streamStart, streamEnd, documentStart, documentEnd, alias
        case scalar(YAMLDocument.Scalar)
        case sequenceStart, sequenceEnd, mappingStart, mappingEnd

        var description: String {
            switch self {
            case .streamStart: "the start of the file"
            case .streamEnd: "the end of the file"
            case .documentStart: "a document start"
            case .documentEnd: "a document end"
            case .alias: "an alias"
            case .scalar(let scalar): "the value '\(scalar.text.prefix(40))'"
            case .sequenceStart: "a list"
            case .sequenceEnd: "the end of a list"
            case .mappingStart: "a section"
            case .mappingEnd: "the end of a section"
            }
        }
    }

    struct Event {
        var kind: Kind
        var mark: YAMLDocument.Mark
    }

    let parser: OpaquePointer

    mutating func next() throws(YAMLDocumentError) -> Event {
        var raw = CYAML_event()
        guard CYAML_parser_next(parser, &raw) == 1 else {
            let error = CYAML_parser_error(parser)
            let problem = error.problem.map { String(cString: $0) } ?? "the YAML parser failed"
            if error.line == 0 {
                throw .encoding(problem: problem, offset: Int(clamping: error.offset))
            }
            throw .syntax(
                problem: problem, context: error.context.map { String(cString: $0) },
                mark: YAMLDocument.Mark(line: Int(clamping: error.line), column: Int(clamping: error.column)))
        }
        let mark = YAMLDocument.Mark(line: Int(clamping: raw.line), column: Int(clamping: raw.column))
        let kind: Kind
        switch Int(raw.kind) {
        case CYAML_EVENT_STREAM_START: kind = .streamStart
        case CYAML_EVENT_STREAM_END: kind = .streamEnd
        case CYAML_EVENT_DOCUMENT_START: kind = .documentStart
        case CYAML_EVENT_DOCUMENT_END: kind = .documentEnd
        case CYAML_EVENT_ALIAS: kind = .alias
        case CYAML_EVENT_SCALAR:
            let text = raw.text.map { String(decoding: UnsafeBufferPointer(start: $0, count: raw.text_length), as: UTF8.self) } ?? ""
            let style: YAMLDocument.Scalar.Style =
                switch Int(raw.scalar_style) {
                case CYAML_SCALAR_QUOTED: .quoted
                case CYAML_SCALAR_BLOCK: .block
                default: .plain
                }
            // An explicit `!!str` makes even `~` a string.
            let tag = raw.tag.map { String(decoding: UnsafeBufferPointer(start: $0, count: raw.tag_length), as: UTF8.self) }
            kind = .scalar(YAMLDocument.Scalar(text: text, style: tag == "tag:yaml.org,2002:str" ? .quoted : style, mark: mark))
        case CYAML_EVENT_SEQUENCE_START: kind = .sequenceStart
        case CYAML_EVENT_SEQUENCE_END: kind = .sequenceEnd
        case CYAML_EVENT_MAPPING_START: kind = .mappingStart
        case CYAML_EVENT_MAPPING_END: kind = .mappingEnd
        default:
            throw .structure(key: nil, problem: "libyaml returned no event", mark: mark)
        }
        return Event(kind: kind, mark: mark)
    }
}
