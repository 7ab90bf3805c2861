/// Waits until `condition` holds, checking it every `interval`, for at most `timeout`: for
/// events that have no notification to await (a file appearing, a server answering).
/// Returns whether it held.
public func eventually(
    timeout: Duration = .seconds(30 * TestTiming.scale), interval: Duration = .milliseconds(10), _ condition: () async -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
}
