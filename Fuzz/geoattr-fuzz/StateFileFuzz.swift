import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel

/// The foreground/background state file: `StateFileWatcher.read`, as the daemon calls it at
/// start and on every inotify event, on a file with the fuzzed bytes.
struct StateFileFuzz: FuzzHarness {
    let path = Scratch.path("state")

    init() throws {}

    func run(_ input: [UInt8]) {
        do {
            try Scratch.write(input, to: path)
        } catch {
            fatalError("state harness: \(error)")
        }
        let text = String(decoding: input, as: UTF8.self).trimmingWhitespace()
        // At start (empty: the default) and while running (empty: keep what is there).
        for emptyMeansDefault in [true, false] {
            let state = StateFileWatcher.read(
                path: path, defaultState: .foreground, logger: DiscardingLogHandler.logger, emptyMeansDefault: emptyMeansDefault)
            // Only the two words, with surrounding whitespace, may change the state; nothing
            // but whitespace gives the default at start and nothing while running.
            let expected: String? = text.isEmpty ? (emptyMeansDefault ? PowerState.foreground.rawValue : nil) : text
            if let state, state.rawValue != expected {
                fatalError("state file accepted as \(state) from \(input) (empty means default: \(emptyMeansDefault))")
            }
        }
    }
}
