import Configuration
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import GeoAttrSettings
import Logging

/// Reads and validates the configuration from flags, environment and file.
package struct ConfigurationLoader: Sendable {
    /// Flag values by configuration key (`gpsd.endpoint`, ...).
    package var flags: [String: String]
    package var environment: [String: String]
    /// The YAML file; `explicit` when the user named it (then it must exist).
    package var filePath: String
    package var explicit: Bool

    package init(flags: [String: String], environment: [String: String], filePath: String, explicit: Bool) {
        self.flags = flags
        self.environment = environment
        self.filePath = filePath
        self.explicit = explicit
    }

    package func load() async throws -> DaemonConfiguration {
        let fileProvider = try ConfigurationFile.provider(path: filePath, explicit: explicit)
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in flags {
            values[AbsoluteConfigKey(stringLiteral: key)] = ConfigValue(.string(value), isSecret: false)
        }
        var prefixed: [String: String] = [:]
        let known = Dictionary(ConfigurationKeys.all.map { ($0.environmentVariable, $0) }, uniquingKeysWith: { first, _ in first })
        for (name, value) in environment where name.hasPrefix(DaemonConfiguration.environmentPrefix) {
            if ConfigurationKeys.otherVariables.contains(name) { continue }
            guard let key = known[name] else {
                throw ConfigurationKeys.unknown(Self.keyName(ofVariable: name), as: name)
            }
            // A list in a variable is its items separated by commas; the JSON or YAML form would
            // be read as one item holding brackets and quotes.
            if key.type == .stringArray, value.trimmingWhitespace().hasPrefix("[") {
                throw ConfigurationError(
                    key: key.name,
                    problem: "\(name) holds a list as items separated by commas, without brackets or quotes: \(name)=\(Self.listExample(key))")
            }
            prefixed[String(name.dropFirst(DaemonConfiguration.environmentPrefix.count))] = value
        }
        let reporter = FailureRecorder()
        let reader = ConfigReader(
            providers: [
                InMemoryProvider(name: "command line", values: values),
                EnvironmentVariablesProvider(environmentVariables: prefixed),
                fileProvider,
            ],
            accessReporter: reporter
        )
        let configuration = try read(reader)
        if let failure = reporter.first {
            throw ConfigurationError(key: failure.key, problem: failure.problem)
        }
        return configuration
    }

    /// What a list variable holds, for the message that refuses another form.
    static func listExample(_ key: ConfigurationKey) -> String {
        key == .accessMutate ? "uid:0,gid:27" : "uid:1001=country,gid:20=region"
    }

    /// `GEOATTRD_ACCESS_DEFAULT_LEVL` → `access.default_levl`, for the suggestion only.
    static func keyName(ofVariable name: String) -> String {
        let rest = name.dropFirst(DaemonConfiguration.environmentPrefix.count).lowercased()
        // The section is the first word; the rest keeps its underscores, as the keys do.
        guard let underscore = rest.firstIndex(of: "_") else { return rest }
        return rest[..<underscore] + "." + rest[rest.index(after: underscore)...]
    }

    private func read(_ reader: ConfigReader) throws -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        for key in ConfigurationKeys.all {
            try key.read(reader, into: &configuration)
        }
        try ConfigurationChecks.check(configuration)
        return configuration
    }
}
