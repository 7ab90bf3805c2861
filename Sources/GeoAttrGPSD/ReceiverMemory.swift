import Synchronization

/// What the receivers behind gpsd have shown about error estimates, by device path, for the
/// life of the process: a receiver seen never to send one is not waited on again.
public final class ReceiverMemory: Sendable {
    /// The one the daemon keeps while it runs.
    public static let process = ReceiverMemory()

    private let known = Mutex<[String: FixEvaluator.EstimateHistory]>([:])

    public init() {}

    var snapshot: [String: FixEvaluator.EstimateHistory] { known.withLock { $0 } }

    func record(_ learned: [String: FixEvaluator.EstimateHistory]) {
        known.withLock { $0.merge(learned) { _, new in new } }
    }
}
