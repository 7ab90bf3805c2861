import GeoAttrModel
@testable import GeoAttrServer
import Testing
import GeoAttrSettings

/// A client is its uid and all its groups; whatever cannot be known about it narrows access.
@Suite("Access by uid and groups")
struct AccessPolicyGroupsTests {
    static let policy = AccessPolicy(
        rules: [
            .init(subject: .gid(500), grant: Grant(level: .country)),
            .init(subject: .uid(1001), grant: Grant(level: .locality, coordinateDecimals: 2)),
            .init(subject: .gid(600), grant: Grant(level: .region)),
        ],
        defaultGrant: Grant(level: .exact), mutators: [.gid(700)], daemonUID: 999)

    @Test func aGidRuleMatchesSupplementaryGroupsAsWellAsThePrimary() {
        // As `sg` would start it: the restricted group is supplementary, another is primary.
        #expect(Self.policy.grant(uid: 2000, groups: [100, 500]).level == .country)
        #expect(Self.policy.grant(uid: 2000, groups: [500]).level == .country)
        #expect(Self.policy.grant(uid: 2000, groups: [100]).level == .exact)
    }

    @Test func aUidRuleWinsOverAnyGidRuleWhateverTheFileOrder() {
        #expect(Self.policy.grant(uid: 1001, groups: [500, 600]) == Grant(level: .locality, coordinateDecimals: 2))
    }

    @Test func theFirstMatchingGidRuleInFileOrderWins() {
        #expect(Self.policy.grant(uid: 2000, groups: [600, 500]).level == .country)
        #expect(Self.policy.grant(uid: 2000, groups: [600]).level == .region)
    }

    @Test func mutateFollowsSupplementaryGroupsToo() {
        #expect(Self.policy.grant(uid: 2000, groups: [100, 700]).mayMutate)
        #expect(!Self.policy.grant(uid: 2000, groups: [100]).mayMutate)
    }

    @Test func unknownSupplementaryGroupsNeverWidenAccess() {
        let unknown = PeerIdentity(uid: 2000, gid: 100, groups: nil)
        #expect(unknown.grant(under: Self.policy).level == .none)
        // A uid rule decides without the groups.
        #expect(PeerIdentity(uid: 1001, gid: 100, groups: nil).grant(under: Self.policy).level == .locality)
        // Without gid rules the groups cannot matter.
        let uidOnly = AccessPolicy(rules: [], defaultGrant: Grant(level: .region), daemonUID: 999)
        #expect(unknown.grant(under: uidOnly).level == .region)
    }

    @Test func aPeerWhoseCredentialsCannotBeReadSeesNothing() {
        let everyoneExact = AccessPolicy(rules: [.init(subject: .uid(1001), grant: Grant(level: .country))], defaultGrant: Grant(level: .exact), daemonUID: 999)
        #expect(PeerIdentity(uid: .max, gid: .max, groups: nil).grant(under: everyoneExact) == Grant(level: .none))
    }

    @Test func theKernelsGroupListIsReadFromAZeroedBuffer() {
        // Zeros after the last gid are the buffer's: the kernel's list is sorted, so gid 0 comes first.
        #expect(PeerGroups.decode([20, 500, 0, 0], hasAnyGroup: true) == [20, 500])
        #expect(PeerGroups.decode([0, 20, 0], hasAnyGroup: true) == [0, 20])
        // Wherever a zero stands before a gid, it is the kernel's.
        #expect(PeerGroups.decode([65534, 0, 20, 0], hasAnyGroup: true) == [0, 20, 65534])
        // Nothing but zeros: the zero-length read decides between no group and gid 0 alone.
        #expect(PeerGroups.decode([0, 0, 0, 0], hasAnyGroup: false) == [])
        #expect(PeerGroups.decode([0, 0, 0, 0], hasAnyGroup: true) == [0])
    }

    @Test func aGroupZeroRuleAppliesToMembersOfGroupZeroOnly() {
        let policy = AccessPolicy(
            rules: [.init(subject: .gid(0), grant: Grant(level: .none))], defaultGrant: Grant(level: .country), daemonUID: 999)
        #expect(PeerIdentity(uid: 2000, gid: 100, groups: [100]).grant(under: policy).level == .country)
        #expect(PeerIdentity(uid: 2000, gid: 100, groups: [0, 100]).grant(under: policy).level == .none)
    }

    @Test(arguments: ["uid:1=exact/2", "uid:1=country/1", "gid:2=none/0", "uid:1=region/10"])
    func decimalsWhereTheyCannotApplyAreRefused(text: String) {
        #expect(throws: AccessPolicy.ParseError.self) { try AccessPolicy.parseRule(text) }
    }

    @Test(arguments: ["uid:1=postal/3", "uid:1=locality/0", "gid:2=region/9"])
    func decimalsBetweenExactAndCountryAreAccepted(text: String) throws {
        #expect(try AccessPolicy.parseRule(text).grant.coordinateDecimals != nil)
    }

    @Test func theEntityTagCarriesTheWholeGrant() {
        let two = AttributesEndpoint.entityTag(generation: 7, grant: Grant(level: .locality, coordinateDecimals: 2))
        let three = AttributesEndpoint.entityTag(generation: 7, grant: Grant(level: .locality, coordinateDecimals: 3))
        let none = AttributesEndpoint.entityTag(generation: 7, grant: Grant(level: .locality))
        #expect(Set([two, three, none]).count == 3)
        #expect(AttributesEndpoint.entityTag(generation: 7, grant: Grant(level: .exact)) == "\"7-exact\"")
    }

    /// The refusal names what decides, so that the fix it gives works: a uid: entry cannot be
    /// overridden by adding a gid: entry.
    @Test func aRefusalNamesTheEntryThatDecides() {
        let policy = AccessPolicy(
            rules: [
                .init(subject: .gid(600), grant: Grant(level: .region)),
                .init(subject: .uid(1001), grant: Grant(level: .none)),
                .init(subject: .gid(500), grant: Grant(level: .none)),
            ],
            defaultGrant: Grant(level: .none), daemonUID: 999)
        let byUID = policy.refusal(uid: 1001, groups: [600])
        #expect(byUID?.hasPrefix("access.rules entry uid:1001=none decides for this uid (a uid: entry decides before every gid: entry)") == true)
        let byGID = policy.refusal(uid: 2000, groups: [500, 700])
        #expect(byGID?.hasPrefix("access.rules entry gid:500=none is the first gid: entry matching one of its groups, and no uid: entry names uid 2000; add uid:2000=LEVEL") == true)
        let byDefault = policy.refusal(uid: 2000, groups: [700])
        #expect(byDefault?.hasPrefix("no access.rules entry names uid 2000 or one of its groups, and access.default_level is none") == true)
        #expect(policy.refusal(uid: 2000, groups: [600]) == nil)
        #expect(policy.refusal(uid: 0, groups: [0]) == nil)
        let unknownGroups = PeerIdentity(uid: 2000, gid: 100, groups: nil)
        #expect(unknownGroups.refusal(under: Self.policy).hasPrefix("its groups could not be read"))
    }

    @Test func aRuleReadsAsWritten() throws {
        for text in ["uid:1001=none", "gid:20=region/2", "uid:5=exact"] {
            #expect("\(try AccessPolicy.parseRule(text))" == text)
        }
    }
}
