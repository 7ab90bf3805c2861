public import GeoAttrModel

/// Maps a client's peer credentials to what it may see and do.
///
/// A client is its uid and its groups: the primary gid (SO_PEERCRED) and the supplementary
/// groups (SO_PEERGROUPS), as one set, so that `sg` or `newgrp` cannot step out of a gid rule.
/// The first `uid:` rule in file order that matches wins; otherwise the first `gid:` rule in file
/// order that matches any of the client's groups; otherwise the default. `access.mutate`
/// matches the same way. Root and the daemon's own uid always see everything and may mutate.
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

    public struct Rule: Sendable, Hashable, CustomStringConvertible {
        public var subject: Subject
        public var grant: Grant
        public init(subject: Subject, grant: Grant) {
            self.subject = subject
            self.grant = grant
        }

        /// As written in `access.rules`: `uid:1001=none`, `gid:20=region/2`.
        public var description: String {
            "\(subject)=\(grant.level.rawValue)\(grant.coordinateDecimals.map { "/\($0)" } ?? "")"
        }
    }

    /// A rule or subject that cannot be parsed, with the text to fix.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var text: String
        public var description: String {
            "'\(text)': expected uid:N=LEVEL[/DECIMALS] or gid:N=LEVEL[/DECIMALS], LEVEL one of exact, postal, locality, region, country, none; /DECIMALS (0 to 9) only with postal, locality or region"
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

    /// - Parameter groups: the primary and supplementary groups.
    public func grant(uid: UInt32, groups: Set<UInt32>) -> Grant {
        if uid == 0 || uid == daemonUID {
            return Grant(level: .exact, mayMutate: true)
        }
        func matches(_ subject: Subject) -> Bool {
            switch subject {
            case .uid(let ruleUID): ruleUID == uid
            case .gid(let ruleGID): groups.contains(ruleGID)
            }
        }
        var grant =
            rules.first { if case .uid = $0.subject { matches($0.subject) } else { false } }?.grant
            ?? rules.first { if case .gid = $0.subject { matches($0.subject) } else { false } }?.grant
            ?? defaultGrant
        grant.mayMutate = mutators.contains(where: matches)
        return grant
    }

    /// Why `uid` with `groups` sees nothing, for the refusal a client reads: the entry that
    /// decides (a `uid:` entry decides before every `gid:` entry, which the fix must respect), or
    /// the default level, with what to change. `nil` when the policy grants it something.
    public func refusal(uid: UInt32, groups: Set<UInt32>) -> String? {
        guard grant(uid: uid, groups: groups).level == .none else { return nil }
        if let rule = rules.first(where: { $0.subject == .uid(uid) }) {
            return "access.rules entry \(rule) decides for this uid (a uid: entry decides before every gid: entry); change or remove it, then reload"
        }
        if let rule = rules.first(where: { if case .gid(let gid) = $0.subject { groups.contains(gid) } else { false } }) {
            return "access.rules entry \(rule) is the first gid: entry matching one of its groups, and no uid: entry names uid \(uid); add uid:\(uid)=LEVEL or change that entry, then reload"
        }
        return "no access.rules entry names uid \(uid) or one of its groups, and access.default_level is none; add uid:\(uid)=LEVEL or gid:GID=LEVEL for one of its groups, then reload"
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
            // Rounded coordinates exist only between exact and country: anywhere else the
            // suffix would silently do nothing.
            guard let value = Int(levelParts[1]), (0...9).contains(value), Grant.levelsWithDecimals.contains(level) else {
                throw ParseError(text: text)
            }
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
