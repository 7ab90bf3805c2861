import Foundation
import GeoAttrLinux
import GeoAttrModel
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// The watcher against real files and real inotify.
@Suite("StateFileWatcher")
struct StateFileWatcherTests {
    final class Changes: Sendable {
        let seen = Mutex<[PowerState]>([])
        func append(_ state: PowerState) { seen.withLock { $0.append(state) } }
        var all: [PowerState] { seen.withLock { $0 } }

        func waitFor(count: Int, timeout: Duration = .seconds(30)) async -> [PowerState] {
            _ = await eventually(timeout: timeout, interval: .milliseconds(5)) { all.count >= count }
            return all
        }
    }

    /// Runs a watcher on `path` for the duration of `body`, from the moment its watch is in place.
    func watching(_ path: String, _ body: (Changes) async throws -> Void) async throws {
        let changes = Changes()
        let (watchingStream, watchingContinuation) = AsyncStream.makeStream(of: Void.self)
        let watcher = StateFileWatcher(
            path: path, defaultState: .foreground, logger: Logger(label: "test"),
            onWatching: { watchingContinuation.yield() }
        ) { changes.append($0) }
        let task = Task { try await watcher.run() }
        var iterator = watchingStream.makeAsyncIterator()
        _ = await iterator.next()
        try await body(changes)
        task.cancel()
        _ = try? await task.value
    }

    /// Runs the watcher `make` builds (reporting into the given changes) until it reports one
    /// change, or the wait gives up; what it reported.
    func firstChange(_ make: (Changes) -> StateFileWatcher) async -> [PowerState] {
        let changes = Changes()
        let watcher = make(changes)
        let task = Task { try await watcher.run() }
        let reported = await changes.waitFor(count: 1)
        task.cancel()
        _ = try? await task.value
        return reported
    }

    @Test("a write after the first read and before the watch is in place is seen, without another write")
    func writeBeforeTheWatchIsSeen() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("foreground\n", to: "state")
        let reported = await firstChange { changes in
            StateFileWatcher(
                path: path, defaultState: .foreground, knownState: nil, logger: Logger(label: "test"), onWatching: {},
                beforeWatch: { _ = try? "background\n".write(toFile: path, atomically: false, encoding: .utf8) }
            ) { changes.append($0) }
        }
        #expect(reported == [.background])
    }

    @Test("a state written before the watcher runs, unlike the one its caller knows, is reported")
    func differsFromTheKnownState() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("background\n", to: "state")
        let reported = await firstChange { changes in
            StateFileWatcher(path: path, defaultState: .foreground, knownState: .foreground, logger: Logger(label: "test")) {
                changes.append($0)
            }
        }
        #expect(reported == [.background])
    }

    @Test func readsContentWithWhitespaceAndTheDefaultWhenAbsent() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("state")
        let logger = Logger(label: "test")
        #expect(StateFileWatcher.read(path: path, defaultState: .background, logger: logger) == .background)
        _ = try directory.write("  background\n", to: "state")
        #expect(StateFileWatcher.read(path: path, defaultState: .foreground, logger: logger) == .background)
        _ = try directory.write("Foreground", to: "state")
        #expect(StateFileWatcher.read(path: path, defaultState: .foreground, logger: logger) == nil)
    }

    @Test("empty means the default at start, and keeps the state while running (a writer truncates first)")
    func emptyFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("", to: "state")
        let logger = Logger(label: "test")
        #expect(StateFileWatcher.read(path: path, defaultState: .background, logger: logger) == .background)
        #expect(StateFileWatcher.read(path: path, defaultState: .background, logger: logger, emptyMeansDefault: false) == nil)
        _ = try directory.write(" \n", to: "state")
        #expect(StateFileWatcher.read(path: path, defaultState: .foreground, logger: logger) == .foreground)
    }

    @Test("write, replace by rename, delete, re-create: every change is seen")
    func followsTheFileThroughItsLife() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("state")
        try await watching(path) { changes in
            try "background\n".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 1) == [.background])
            // Atomic replacement: write elsewhere, rename over.
            try "foreground".write(toFile: directory.file("state.new"), atomically: false, encoding: .utf8)
            #expect(rename(directory.file("state.new"), path) == 0)
            #expect(await changes.waitFor(count: 2) == [.background, .foreground])
            try "background".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 3) == [.background, .foreground, .background])
            // Deleted: the default (foreground).
            try FileManager.default.removeItem(atPath: path)
            #expect(await changes.waitFor(count: 4) == [.background, .foreground, .background, .foreground])
            // Re-created.
            try "background".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 5) == [.background, .foreground, .background, .foreground, .background])
        }
    }

    @Test("invalid content is ignored: the last valid state stands")
    func invalidContentIsIgnored() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("state")
        try await watching(path) { changes in
            try "sleeping".write(toFile: path, atomically: false, encoding: .utf8)
            try "background".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 1) == [.background])
            try "garbage".write(toFile: path, atomically: false, encoding: .utf8)
            try "background".write(toFile: path, atomically: false, encoding: .utf8)
            try "foreground".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 2) == [.background, .foreground])
        }
    }

    @Test("a state file over 4 KiB gives its space back: emptied at once, the last valid state stands, a later write is read")
    func oversizedFileIsEmptied() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("state")
        try await watching(path) { changes in
            try "background".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 1) == [.background])
            let writer = try #require(FileHandle(forWritingAtPath: path))
            try writer.write(contentsOf: Data(repeating: UInt8(ascii: "x"), count: 8 * 1024 * 1024))
            try writer.close()
            let emptied = await eventually(timeout: .seconds(10)) {
                ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1) == 0
            }
            #expect(emptied, "the oversized state file kept its space")
            try "foreground".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await changes.waitFor(count: 2) == [.background, .foreground])
        }
    }

    @Test("a thousand flips: the last one wins, and far fewer reports than flips")
    func flappingEndsOnTheLastState() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("state")
        try await watching(path) { changes in
            for index in 0..<1000 {
                try (index.isMultiple(of: 2) ? "background" : "foreground").write(toFile: path, atomically: false, encoding: .utf8)
            }
            try "background".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(await eventually { changes.all.last == .background })
            #expect(changes.all.count <= 1001)
        }
    }
}
