import GeoAttrCore
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
        let state = StateFileWatcher.read(path: path, defaultState: .foreground, logger: DiscardingLogHandler.logger)
        // Only the two words, with surrounding whitespace, may change the state.
        if let state, state.rawValue != String(decoding: input, as: UTF8.self).trimmingWhitespace() {
            fatalError("state file accepted as \(state) from \(input)")
        }
    }
}
