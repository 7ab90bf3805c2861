/// The geocoder index as the daemon reports it: the one in service, and the file refused at the
/// last load. The index's reloader is its one writer; the status's `index_version`,
/// `index_problem` and `degraded` are read from it here and nowhere else.
public enum IndexState: Sendable, Hashable {
    /// No load has ended yet: nothing is in service.
    case notLoaded
    /// The last load succeeded and this index is in service.
    case loaded(version: String)
    /// The last load refused a file; `keeping` is the index that stays in service, if any.
    case refused(IndexRefusal, keeping: String?)

    /// The version of the index in service, `nil` when lookups have none.
    public var versionInService: String? {
        switch self {
        case .notLoaded: nil
        case .loaded(let version): version
        case .refused(_, let keeping): keeping
        }
    }

    /// The file refused at the last load, `nil` once a load succeeds.
    public var refusal: IndexRefusal? {
        switch self {
        case .refused(let refusal, _): refusal
        case .notLoaded, .loaded: nil
        }
    }

    /// What the daemon cannot do for want of an index, one sentence each (the operator's guide
    /// quotes the sentence: keep it as it is).
    public var degradedReasons: [String] {
        versionInService == nil ? ["no geocoder index: serving location attributes only"] : []
    }
}

/// An index file the daemon would not put in service, and why.
public struct IndexRefusal: Sendable, Hashable, CustomStringConvertible {
    public let path: String
    /// The loader's explanation: what is wrong with the file and what to do about it.
    public let reason: String

    /// `PATH: REASON`, as the status's `index_problem` says it.
    public var description: String { "\(path): \(reason)" }

    public init(path: String, reason: String) {
        (self.path, self.reason) = (path, reason)
    }
}
