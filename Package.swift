// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "geoattrd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "geoattrd", targets: ["geoattrd"]),
        .executable(name: "geoattrctl", targets: ["geoattrctl"]),
        .library(name: "GeoAttrModel", targets: ["GeoAttrModel"]),
        .library(name: "GeoAttrClient", targets: ["GeoAttrClient"]),
        .library(name: "GeoIndex", targets: ["GeoIndex"]),
        // The back office's door (integrations/geocoder, scripts/build-wheel.sh).
        .library(name: "geoattrd_geocoder", type: .dynamic, targets: ["GeoIndexArrow"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // No traits: the default JSON trait and the YAML trait (Yams) bring full Foundation and ICU.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The geo.* names are behind the Experimental trait, which wants the minor version pinned.
        .package(
            url: "https://github.com/swift-otel/swift-otel-semantic-conventions",
            .upToNextMinor(from: "1.44.0"),
            traits: ["Experimental"]
        ),
    ],
    targets: [
        // libgps through pkg-config. Only CGPS may depend on it: no Swift code sees gps.h.
        .systemLibrary(
            name: "CLibGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),
        // The flat, version-independent view of libgps (see Sources/CGPS/include/CGPS.h).
        .target(
            name: "CGPS",
            dependencies: ["CLibGPS"],
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // libyaml through pkg-config. Only CYAML may depend on it: no Swift code sees yaml.h.
        .systemLibrary(
            name: "CLibYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // libyaml's event parser as a flat C view (see Sources/CYAML/include/CYAML.h).
        .target(name: "CYAML", dependencies: ["CLibYAML"]),
        // The arguments glibc passes to the executable's constructors (argc, argv): the one C shim that
        // knows glibc's .init_array call and nothing else.
        .target(name: "CProgramArguments"),
        // The arguments a tool parses, read without /proc, or exit 70 when there are none. Knows the
        // C shim and the C library only.
        .target(name: "ProgramArguments", dependencies: ["CProgramArguments"]),
        // Whole writes to a descriptor (again after EINTR and short writes), crash-safe replacement of
        // a file and the temporary names it uses. Stdlib + Glibc only: the lowest layer, under the
        // geocoder's builder and the daemon's plumbing alike.
        .target(name: "SystemWrites"),
        // Read-only mappings that survive their file shrinking under them: a SIGBUS handler for the
        // registered ranges, chained to the one before it. Knows POSIX signals and mmap only.
        .target(name: "CMappingGuard"),
        // GeoPlace, the one place type, from the index to every answer, and great-circle distance.
        // Stdlib + Glibc's math only: the model, the core and the clients name a place without
        // linking the index reader.
        .target(name: "GeoPlaces"),
        // The offline reverse geocoder: memory-mapped index reader, lookup, and where the index is
        // installed. Stdlib + Glibc and the mapping guard only: nothing of Foundation, gpsd, sockets
        // or the daemon.
        .target(name: "GeoIndex", dependencies: ["GeoPlaces", "CMappingGuard"]),
        // Reads upstream formats (GeoJSON, GeoNames TSV, iso-codes) and writes the index. Knows the
        // index format; nothing of the daemon.
        .target(name: "GeoIndexBuilder", dependencies: ["GeoIndex", "SystemWrites"]),
        // The index commands' logic for geoattrctl: batch lookup and a place's JSON under the model's
        // geo.* names. Knows the reader and the model; nothing of the daemon, gpsd or sockets.
        .target(name: "GeoIndexCLI", dependencies: ["GeoAttrModel", "GeoIndex", "GeoPlaces", "SystemWrites"]),
        // The geocoder behind a C interface for other languages: coordinates in, Arrow-layout string
        // columns out, one per place attribute. Knows the reader and the model's attribute names.
        .target(name: "GeoIndexArrow", dependencies: ["GeoAttrModel", "GeoIndex", "GeoPlaces"]),
        // The geocoder's benchmark (lookups, point sets); not shipped.
        .executableTarget(
            name: "geoindex-bench",
            dependencies: ["GeoIndex", "GeoPlaces", "SystemWrites"],
            path: "Benchmarks/geoindex-bench"
        ),
        // What the daemon, its clients and the CLI share: value types, the API's documents, the
        // attribute formats and their renderers, the geo.* names of a place. No I/O, no index reader.
        .target(
            name: "GeoAttrModel",
            dependencies: [
                "GeoPlaces",
                .product(name: "OTelSemanticConventions", package: "swift-otel-semantic-conventions"),
            ]
        ),
        // The settings the configuration fills and the parts read: the access policy, the API's
        // limits, the fix acceptance rules, the gpsd endpoint. Values only; knows the model alone.
        .target(name: "GeoAttrSettings", dependencies: ["GeoAttrModel"]),
        // Plain logic: the scheduler, the attribute store, policies, result and cache value types, and
        // the protocols its I/O sits behind (FixSource, Geocoding, CacheStore, BlockingWorkStarter).
        // Imports no Glibc and starts no thread: no files, sockets, gpsd or index format.
        .target(
            name: "GeoAttrCore",
            dependencies: [
                "GeoAttrModel",
                "GeoPlaces",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The daemon's Linux plumbing: inotify and state-file watchers, the dedicated thread and wake
        // pipe, safe whole-file reads and the leftovers of interrupted writes, the cache file (the
        // core's CacheStore), account names. Knows the core's protocols, the model and SystemWrites;
        // nothing of gpsd, sockets or the index.
        .target(
            name: "GeoAttrLinux",
            dependencies: [
                "GeoAttrCore",
                "GeoAttrModel",
                "SystemWrites",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The index as the core's Geocoding, opened, validated and swapped when its file changes.
        // Knows the index reader and the Linux plumbing; nothing of gpsd or sockets.
        .target(
            name: "GeoAttrGeocoder",
            dependencies: [
                "GeoAttrCore",
                "GeoAttrLinux",
                "GeoIndex",
                "GeoPlaces",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The gpsd FixSource: one-shot fixes through CGPS on a dedicated thread. Knows libgps (through
        // CGPS) and the Linux plumbing; nothing of sockets or the index.
        .target(
            name: "GeoAttrGPSD",
            dependencies: [
                "CGPS",
                "GeoAttrCore",
                "GeoAttrLinux",
                "GeoAttrModel",
                "GeoAttrSettings",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The HTTP/1.1 API on a Unix socket: NIO's HTTP/1 codec and handlers of ours over one endpoint
        // table. Sees the scheduler through a protocol and the store's values; nothing of gpsd or the index.
        .target(
            name: "GeoAttrServer",
            dependencies: [
                "GeoAttrCore",
                "GeoAttrLinux",
                "GeoAttrModel",
                "GeoAttrSettings",
                "SystemWrites",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OTelSemanticConventions", package: "swift-otel-semantic-conventions"),
            ]
        ),
        // The client library for Swift processes: attributes(), watch(), and a follower whose snapshot
        // feeds swift-log metadata. Knows the socket's HTTP API and the model; nothing of the daemon
        // or the index reader.
        .target(
            name: "GeoAttrClient",
            dependencies: [
                "GeoAttrModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // systemd integration: journald-friendly logging, sd_notify and socket activation (the
        // protocols themselves, no libsystemd). Knows swift-log; nothing of the daemon's parts.
        .target(
            name: "GeoAttrSystemd",
            dependencies: ["SystemWrites", .product(name: "Logging", package: "swift-log")]
        ),
        // The daemon's configuration: flags, GEOATTRD_* environment, YAML file (libyaml through
        // CYAML), validation, reload. A library of its own so the fuzzer drives the loading path the
        // daemon uses. Knows the settings of every part it configures; runs none of them.
        .target(
            name: "GeoAttrDaemonConfig",
            dependencies: [
                "CYAML",
                "GeoIndex",
                "GeoAttrCore",
                "GeoAttrLinux",
                "GeoAttrModel",
                "GeoAttrSettings",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // The daemon: assembles the parts from a configuration and runs them as one service group.
        .executableTarget(
            name: "geoattrd",
            dependencies: [
                "GeoAttrCore",
                "GeoAttrDaemonConfig",
                "GeoAttrGeocoder",
                "GeoAttrGPSD",
                "GeoAttrLinux",
                "GeoAttrModel",
                "GeoAttrSettings",
                "GeoAttrSystemd",
                "GeoAttrServer",
                "GeoIndex",
                "ProgramArguments",
                "SystemWrites",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The operator's tool: the API client commands, a one-shot fix, doctor, and the index commands.
        .executableTarget(
            name: "geoattrctl",
            dependencies: [
                "GeoAttrClient",
                "GeoIndex",
                "GeoIndexBuilder",
                "GeoIndexCLI",
                "GeoAttrGPSD",
                "GeoAttrLinux",
                "GeoAttrModel",
                "GeoAttrSettings",
                "ProgramArguments",
                "SystemWrites",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Test helpers: child processes, gpsfake, NMEA track generation, waits on the daemon's events
        // (its status through the client library, its files), a service group run in-process
        // under the lifecycle's graceful-shutdown trigger. Not shipped.
        .target(
            name: "TestSupport",
            dependencies: [
                "GeoAttrClient", "GeoAttrCore", "GeoAttrLinux", "GeoAttrModel", "GeoIndex", "GeoIndexBuilder", "GeoPlaces",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TestSupport"
        ),
        // The escaping corpus rendered by the product's encoders, for the readers outside the Swift
        // tests (systemd's EnvironmentFile=, python-dotenv, the OpenTelemetry SDK). Not shipped.
        .executableTarget(
            name: "escaping-corpus",
            dependencies: ["GeoAttrModel", "TestSupport"],
            path: "Tests/escaping-corpus"
        ),
        // libFuzzer's driver entry point, declared for geoattr-fuzz (defined by -sanitize=fuzzer).
        .target(name: "CFuzzerDriver", path: "Fuzz/CFuzzerDriver"),
        // The fuzz harnesses (HTTP API, index reader and its C interface, config loader, cache file,
        // state file): a libFuzzer binary when built by scripts/fuzz.sh, an input replayer
        // otherwise. Not shipped.
        .executableTarget(
            name: "geoattr-fuzz",
            dependencies: [
                "CFuzzerDriver",
                "GeoAttrCore",
                "GeoAttrLinux",
                "GeoAttrDaemonConfig",
                "GeoAttrModel",
                "GeoAttrServer",
                "GeoAttrSettings",
                "GeoIndex",
                "GeoIndexArrow",
                "GeoPlaces",
                "SystemWrites",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Fuzz/geoattr-fuzz"
        ),
        .testTarget(
            name: "GeoAttrCoreTests",
            dependencies: [
                "GeoAttrCore", "GeoAttrLinux", "GeoAttrModel", "GeoPlaces", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "SystemWritesTests",
            dependencies: ["SystemWrites", "TestSupport"]
        ),
        .testTarget(
            name: "GeoAttrLinuxTests",
            dependencies: [
                "GeoAttrLinux", "GeoAttrCore", "GeoAttrModel", "GeoPlaces", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "GeoAttrGeocoderTests",
            dependencies: [
                "GeoAttrGeocoder", "GeoAttrCore", "GeoAttrModel", "GeoIndex", "GeoPlaces", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "GeoAttrGPSDTests",
            dependencies: ["GeoAttrGPSD", "GeoAttrSettings", "GeoAttrCore", "GeoAttrModel", "CGPS", "TestSupport"]
        ),
        .testTarget(
            name: "GeoAttrCtlTests",
            dependencies: ["TestSupport", "GeoAttrModel", "GeoIndex"]
        ),
        .testTarget(
            name: "GeoAttrdTests",
            // GeoAttrCore: the metric catalogue, which /metrics must expose exactly; geoattrd: its own
            // services (the output files) run in-process too, beside the binary.
            dependencies: [
                "geoattrd", "TestSupport", "GeoAttrClient", "GeoAttrCore", "GeoAttrModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "GeoIndexTests",
            dependencies: ["GeoIndex", "GeoIndexBuilder", "GeoIndexCLI", "GeoPlaces", "TestSupport"]
        ),
        // The fault-injection suite: the release binary under gpsd, file, signal and client faults
        // (scripts/fault-suite.sh builds it and runs this target on its own).
        .testTarget(
            name: "GeoAttrdFaultTests",
            // GeoAttrLinux: the cache file's real loader, run in-process at every truncation offset;
            // GeoIndex: the index layout, to damage fixture indexes field by field.
            dependencies: ["TestSupport", "GeoAttrClient", "GeoAttrModel", "GeoAttrCore", "GeoAttrLinux", "GeoIndex", "GeoPlaces"]
        ),
        .testTarget(
            name: "GeoAttrDaemonConfigTests",
            dependencies: [
                "GeoAttrDaemonConfig", "GeoAttrCore", "GeoAttrLinux", "GeoAttrModel", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        .testTarget(
            name: "GeoAttrServerTests",
            dependencies: [
                "GeoAttrServer", "GeoAttrSettings", "GeoAttrCore", "GeoAttrModel", "GeoPlaces", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Upcoming features, as the models do. Internal imports by default only where an import can leak
// into a public API: the shipped targets.
for target in package.targets where target.type != .system && !["CGPS", "CYAML"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // The geocoder targets spell out each import's access and build without
    // InternalImportsByDefault, as a package of their own would.
    let geocoderTargets: Set = ["SystemWrites", "GeoPlaces", "GeoIndex", "GeoIndexBuilder", "GeoIndexCLI", "geoindex-bench"]
    if target.type != .test && target.name != "TestSupport" && !geocoderTargets.contains(target.name) {
        settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    }
    target.swiftSettings = settings
}
