import GeoAttrCore
import GeoAttrModel
import GeoAttrServer
import Synchronization

/// Stands in for the scheduler: records each command and answers as told.
final class RecordingScheduler: SchedulerCommands {
    enum Command: Sendable, Hashable {
        case refresh(origin: String, waits: Bool)
        case powerState(PowerState, origin: String)
    }

    let outcome: Scheduler.RefreshOutcome
    /// Handed to a waiting refresh at once; `nil`: its attempt never ends.
    let result: Result<LocationResult, FixError>?
    private let recorded = Mutex<[Command]>([])

    init(outcome: Scheduler.RefreshOutcome = .accepted, result: Result<LocationResult, FixError>? = nil) {
        self.outcome = outcome
        self.result = result
    }

    var commands: [Command] { recorded.withLock { $0 } }

    func requestRefresh(origin: String, completion: Scheduler.Completion?) async -> Scheduler.RefreshOutcome {
        recorded.withLock { $0.append(.refresh(origin: origin, waits: completion != nil)) }
        if case .refused = outcome { return outcome }
        if let completion, let result { completion(result) }
        return outcome
    }

    func applyPowerState(_ state: PowerState, origin: String) async {
        recorded.withLock { $0.append(.powerState(state, origin: origin)) }
    }
}
