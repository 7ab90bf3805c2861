public import GeoAttrModel

/// Maps a client's peer credentials (SO_PEERCRED) to what it may see and do.
///
/// Rules name a uid or a gid (the peer's primary group: SO_PEERCRED carries no supplementary
/// groups). The first rule that matches the uid wins, then the first that matches the gid, then
/// the default. Root and the daemon's own uid always see everything and may mutate.
public struct AccessPolicy: Sendable, Hashable {
    public enum Subject: Sendable, Hashable, CustomStringConvertible {
        case uid(UInt32)
        case gid(UInt32)

        public var description: String {
            switch self {
            case .uid(let uid): "uid:\(uid)"
            case .gid(let gid): "gid:\(gid)"
            }
        }
    }

    public struct Rule: Sendable, Hashable {
        public var subject: Subject
        public var grant: Grant
        public init(subject: Subject, grant: Grant) {
            self.subject = subject
            self.grant = grant
        }
    }

    /// A rule or subject that cannot be parsed, with the text to fix.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var text: String
        public var description: String {
            "'\(text)': expected uid:N=LEVEL[/DECIMALS] or gid:N=LEVEL[/DECIMALS], LEVEL one of exact, postal, locality, region, country, none"
        }
    }

    public var rules: [Rule]
    public var defaultGrant: Grant
    /// Who may force refreshes and change the state, besides root and the daemon's uid.
    public var mutators: [Subject]
    public var daemonUID: UInt32

    public init(rules: [Rule] = [], defaultGrant: Grant = Grant(level: .exact), mutators: [Subject] = [], daemonUID: UInt32) {
        self.rules = rules
        self.defaultGrant = defaultGrant
        self.mutators = mutators
        self.daemonUID = daemonUID
    }

    public func grant(uid: UInt32, gid: UInt32) -> Grant {
        if uid == 0 || uid == daemonUID {
            return Grant(level: .exact, mayMutate: true)
        }
        var grant =
            rules.first { $0.subject == .uid(uid) }?.grant
            ?? rules.first { $0.subject == .gid(gid) }?.grant
            ?? defaultGrant
        grant.mayMutate = mutators.contains(.uid(uid)) || mutators.contains(.gid(gid))
        return grant
    }

    /// Parses `uid:1001=country`, `gid:20=region/2`.
    public static func parseRule(_ text: String) throws(ParseError) -> Rule {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2 else { throw ParseError(text: text) }
        let subject = try parseSubject(String(parts[0]))
        let levelParts = parts[1].split(separator: "/", maxSplits: 1)
        // "uid:1=/" leaves no pieces at all: an error, not a crash.
        guard let levelText = levelParts.first, let level = PrecisionLevel(rawValue: String(levelText)) else {
            throw ParseError(text: text)
        }
        var decimals: Int?
        if levelParts.count == 2 {
            guard let value = Int(levelParts[1]), (0...9).contains(value) else { throw ParseError(text: text) }
            decimals = value
        }
        return Rule(subject: subject, grant: Grant(level: level, coordinateDecimals: decimals))
    }

    /// Parses `uid:N` or `gid:N`.
    public static func parseSubject(_ text: String) throws(ParseError) -> Subject {
        if text.hasPrefix("uid:"), let uid = UInt32(text.dropFirst(4)) { return .uid(uid) }
        if text.hasPrefix("gid:"), let gid = UInt32(text.dropFirst(4)) { return .gid(gid) }
        throw ParseError(text: text)
    }
}
