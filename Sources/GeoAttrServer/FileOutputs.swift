public import GeoAttrCore
public import GeoAttrModel
public import Logging
public import ServiceLifecycle

/// For consumers that cannot talk to a socket: rewrites, atomically on every change, an env
/// file in the OTel form (`OTEL_RESOURCE_ATTRIBUTES=...`, for a collector's env detector or a
/// unit's EnvironmentFile=) and a Prometheus textfile-collector file. The same precision rules
/// apply: the files carry what `grant` allows.
public struct FileOutputs: Service {
    public var envFile: String?
    public var prometheusFile: String?
    public var grant: Grant
    public var ttl: Duration
    private let store: AttributeStore
    private let logger: Logger

    public init(envFile: String?, prometheusFile: String?, grant: Grant, ttl: Duration, store: AttributeStore, logger: Logger) {
        self.envFile = envFile
        self.prometheusFile = prometheusFile
        self.grant = grant
        self.ttl = ttl
        self.store = store
        self.logger = logger
    }

    public func run() async {
        guard envFile != nil || prometheusFile != nil else { return }
        // A crash during a write leaves its temporary file (`PATH.tmp-PID`) beside the output.
        let paths = [envFile, prometheusFile].compactMap { $0 }
        let removed = await offPool {
            paths.flatMap { path in
                FileBytes.removeStaleTemporaries(of: path, directory: path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ".")
            }
        }
        for path in removed ?? [] {
            logger.notice("removed a temporary output file left by an interrupted write", metadata: ["path": "\(path)"])
        }
        var lastGeneration: UInt64?
        for await served in store.updates().cancelOnGracefulShutdown() {
            guard let served, served.result.generation != lastGeneration else { continue }
            lastGeneration = served.result.generation
            let view = AttributeView(served: served, grant: grant, ttl: ttl, state: store.powerState)
            if let envFile {
                let line = "OTEL_RESOURCE_ATTRIBUTES=\"\(AttributeRenderer.otel(view.attributes))\"\n"
                await write(Array(line.utf8), to: envFile)
            }
            if let prometheusFile {
                await write(Array(AttributeRenderer.prometheus(view).utf8), to: prometheusFile)
            }
        }
    }

    private func write(_ bytes: [UInt8], to path: String) async {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let outcome = await offPool { () -> String? in
            do throws(FileBytes.WriteError) {
                try FileBytes.writeAtomically(bytes, to: path, directory: directory, mode: 0o644)
                return nil
            } catch {
                return error.reason
            }
        }
        if let failure = outcome ?? "no thread for the write" {
            logger.warning("output file not written: \(failure); retried at the next change", metadata: ["path": "\(path)"])
        }
    }
}
