import GeoAttrDaemonConfig

/// The configuration: the daemon's `ConfigurationLoader.load()` (libyaml's events mapped to a
/// `LibYAMLSnapshot`, then every key's type and validation) on a YAML file with the fuzzed bytes, named
/// with `--config` (no flags, no GEOATTRD_* environment), then the effective settings as
/// `--check-config` prints them, or the one-line error geoattrd exits with.
struct ConfigLoaderFuzz: FuzzHarness {
    let path = Scratch.path("geoattrd.yaml")

    init() throws {}

    func run(_ input: [UInt8]) {
        do {
            try Scratch.write(input, to: path)
        } catch {
            fatalError("config harness: \(error)")
        }
        let loader = ConfigurationLoader(flags: [:], environment: [:], filePath: path, explicit: true)
        let outcome = runBlocking { () async -> Result<DaemonConfiguration, any Error> in
            do {
                return .success(try await loader.load())
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let configuration):
            _ = configuration.effectiveSettings.map { "\($0.key) = \($0.value)" }.joined(separator: "\n")
        case .failure(let error):
            _ = "geoattrd: \(error)"
        }
    }
}
