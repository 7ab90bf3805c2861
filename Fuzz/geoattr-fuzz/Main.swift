#if FUZZING
import CFuzzerDriver
#endif

import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// libFuzzer harnesses for the daemon's input parsers, one binary for all: `GEOATTR_FUZZ_TARGET`
/// (http, http-socket, index, index-arrow, config, cache, state) picks one. See scripts/fuzz.sh.
///
/// Built with `-sanitize=fuzzer,address -DFUZZING` it is a libFuzzer binary (every libFuzzer
/// flag works); built normally it replays inputs, so a crash file can be run under a debugger
/// or a plain debug build:
///
///     GEOATTR_FUZZ_TARGET=http geoattr-fuzz FILE|DIRECTORY...
///     GEOATTR_FUZZ_TARGET=index geoattr-fuzz --write-seeds DIRECTORY
@main
enum GeoAttrFuzz {
    static func main() {
        let arguments = CommandLine.arguments
        guard let target = FuzzTarget.selected else {
            fail("set \(FuzzTarget.environmentVariable) to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if arguments.count == 3, arguments[1] == "--write-seeds" {
            writeSeeds(target, into: arguments[2])
            exit(0)
        }
        // Every logger the daemon's code makes renders its lines and drops them.
        LoggingSystem.bootstrap { _ in DiscardingLogHandler() }
        do {
            Harness.current = try target.makeHarness()
        } catch {
            fail("cannot set up the \(target.rawValue) harness: \(error)")
        }
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            Harness.runOne(data, size)
            return 0
        })
        #else
        replay(Array(arguments.dropFirst()))
        #endif
    }

    /// Runs the harness on every file named (directories: on every file in them).
    static func replay(_ paths: [String]) {
        guard !paths.isEmpty else { fail("usage: geoattr-fuzz FILE|DIRECTORY... (or --write-seeds DIRECTORY)") }
        var count = 0
        for path in paths {
            for file in files(at: path) {
                guard let bytes = readFile(file) else { fail("cannot read \(file)") }
                print("running \(file) (\(bytes.count) bytes)")
                bytes.withUnsafeBufferPointer { Harness.runOne($0.baseAddress, $0.count) }
                count += 1
            }
        }
        print("ran \(count) inputs without a crash")
    }

    static func writeSeeds(_ target: FuzzTarget, into directory: String) {
        do {
            mkdir(directory, 0o755)
            for seed in try target.generatedSeeds() {
                try Scratch.write(seed.bytes, to: "\(directory)/\(seed.name)")
            }
        } catch {
            fail("cannot write the \(target.rawValue) seeds: \(error)")
        }
    }

    static func files(at path: String) -> [String] {
        guard let stream = opendir(path) else { return [path] }
        defer { closedir(stream) }
        var result: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if entry.pointee.d_type == UInt8(DT_REG) { result.append("\(path)/\(name)") }
        }
        return result.sorted()
    }

    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { return nil }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    static func fail(_ message: String) -> Never {
        let line = Array("geoattr-fuzz: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        exit(64)
    }
}

/// The harness in use, set once before the first input.
enum Harness {
    // Written once by main before the fuzzing loop starts, then only read, on the same thread.
    nonisolated(unsafe) static var current: (any FuzzHarness)?

    static func runOne(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        guard let harness = current else { return }
        harness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    }
}
