/// Why an index could not be built. Messages name the input and what to change.
public enum BuildError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotRead(path: String, errno: Int32)
    case cannotWrite(path: String, errno: Int32)
    case malformedJSON(path: String, offset: Int, detail: String)
    case malformedInput(path: String, line: Int, detail: String)
    case missingInput(String)
    case limitExceeded(String)

    public var description: String {
        switch self {
        case .cannotRead(let path, let code):
            return "cannot read \(path) (errno \(code)); run scripts/fetch-geodata.sh or pass the file explicitly"
        case .cannotWrite(let path, let code):
            return "cannot write \(path) (errno \(code)); check the directory exists and is writable"
        case .malformedJSON(let path, let offset, let detail):
            return "\(path): invalid JSON at byte \(offset): \(detail)"
        case .malformedInput(let path, let line, let detail):
            return "\(path):\(line): \(detail)"
        case .missingInput(let detail):
            return "missing input: \(detail)"
        case .limitExceeded(let detail):
            return "index format limit exceeded: \(detail)"
        }
    }
}
