// Checks, before scripts/sanitize.sh runs the suite under ThreadSanitizer, that its preloaded
// annotations (scripts/tsan-continuation-annotations.c) fit this toolchain: a value handed from a
// thread to a task through a continuation is not reported, and a write after the hand-off is.
//
//   handoff-check [rounds] [write-after-resume]
//
// A thread resumes each continuation the task leaves in a slot, with a fresh object it has just
// written; the task reads it. Resumed before the task has suspended, the runtime takes its fast
// path, which TSan does not see without the annotation. With `write-after-resume` the thread
// writes the object again after resuming: a real race, which TSan must still report.
import Foundation
import Synchronization

final class Handed: @unchecked Sendable {
    var value: Int
    init(_ value: Int) { self.value = value }
}

let rounds = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 20_000
let writesAfterResume = CommandLine.arguments.dropFirst(2).first == "write-after-resume"
let slot = Mutex<CheckedContinuation<Handed, Never>?>(nil)

let resumer = Thread {
    var sent = 0
    while sent < rounds {
        guard let continuation = slot.withLock({ waiting in defer { waiting = nil }; return waiting }) else { continue }
        let handed = Handed(sent)
        handed.value += 1
        continuation.resume(returning: handed)
        if writesAfterResume { handed.value += 1 }
        sent += 1
    }
}
resumer.start()

var sum = 0
for _ in 0..<rounds {
    let handed = await withCheckedContinuation { continuation in slot.withLock { $0 = continuation } }
    sum += handed.value
}
print("handoff-check: \(rounds) hand-offs, sum \(sum)")
