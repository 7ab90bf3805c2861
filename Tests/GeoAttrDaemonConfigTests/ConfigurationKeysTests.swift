import GeoAttrCore
import GeoAttrLinux
import Testing
import TestSupport

@testable import GeoAttrDaemonConfig

@Suite("the table of configuration keys")
struct ConfigurationKeysTests {
    @Test("each key's default is what the daemon uses when nothing is set, in the table's order")
    func defaultsMatchTheTable() {
        let effective = DaemonConfiguration().effectiveSettings
        let printed = Dictionary(effective.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        for key in ConfigurationKeys.all {
            #expect(printed[key.name, default: ""] == key.defaultValue, "\(key.name)")
        }
        #expect(effective.map(\.key) == ConfigurationKeys.all.map(\.name).filter { printed[$0] != nil })
    }

    @Test("names are unique, and so are environment variables and flags")
    func unique() {
        let all = ConfigurationKeys.all
        #expect(Set(all.map(\.name)).count == all.count)
        #expect(Set(all.map(\.environmentVariable)).count == all.count)
        let flags = all.compactMap(\.flag)
        #expect(Set(flags).count == flags.count)
        #expect(ConfigurationKey.scheduleTTL.environmentVariable == "GEOATTRD_SCHEDULE_TTL_S")
    }

    @Test("the shipped file sets every key of the table but those documented commented out")
    func shippedFile() throws {
        let path = RepositoryRoot.file("config/geoattrd.yaml")
        let bytes = try #require(try FileBytes.read(path, limit: 1 << 20))
        let snapshot = try LibYAMLSnapshot(data: bytes.span.bytes, providerName: path, parsingOptions: .default)
        let commentedOut: Set = ["static.latitude", "static.longitude", "static.altitude_m", "static.error_m", "outputs.decimals"]
        #expect(Set(snapshot.keys.map(\.name)) == Set(ConfigurationKeys.all.map(\.name)).subtracting(commentedOut))
    }
}

@Suite("geoattrd's flags and the table")
struct ConfigurationFlagTests {
    @Test("every key with a flag is a geoattrd option naming its key, and no option names a key without")
    func helpMatchesTheTable() async throws {
        let help = try await CommandResult.run(BuiltProducts.path(of: "geoattrd"), ["--help"], timeout: .seconds(20))
        #expect(help.status == 0)
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for key in ConfigurationKeys.all {
            if let flag = key.flag {
                #expect(text.contains("--\(flag) "), "--\(flag) is not an option")
                #expect(text.contains("(\(key.name)"), "the help does not name \(key.name)")
            } else {
                #expect(!text.contains("(\(key.name))"), "\(key.name) has an option that the table does not list")
            }
        }
    }

    @Test("a list in an environment variable is comma-separated; the JSON form is refused with the form to use")
    func listsInEnvironmentVariables() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-env")
        let path = try directory.write("", to: "geoattrd.yaml")
        let comma = ConfigurationLoader(
            flags: [:], environment: ["GEOATTRD_ACCESS_RULES": "uid:1001=country,gid:20=region/2", "GEOATTRD_ACCESS_MUTATE": "uid:0,gid:27"],
            filePath: path, explicit: true)
        let loaded = try await comma.load()
        #expect(loaded.accessRules.map { String(describing: $0) } == ["uid:1001=country", "gid:20=region/2"])
        #expect(loaded.accessMutators.map { String(describing: $0) } == ["uid:0", "gid:27"])
        for (name, value) in [("GEOATTRD_ACCESS_RULES", #"["uid:1001=country"]"#), ("GEOATTRD_ACCESS_MUTATE", " [uid:0]")] {
            let json = ConfigurationLoader(flags: [:], environment: [name: value], filePath: path, explicit: true)
            do {
                _ = try await json.load()
                Issue.record("\(name)=\(value) was accepted")
            } catch {
                #expect("\(error)".contains("\(name) holds a list as items separated by commas, without brackets or quotes: \(name)=uid:"), "\(error)")
            }
        }
    }
}
