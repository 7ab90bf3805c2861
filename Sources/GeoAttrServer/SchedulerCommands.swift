public import GeoAttrCore
public import GeoAttrModel

/// What the API asks of the scheduler, and nothing more: the server never reaches into the
/// scheduler's state, so tests can stand in for it with a recording implementation.
public protocol SchedulerCommands: Sendable {
    /// A forced refresh. `completion`, when given, is called when the attempt this request
    /// started or joined ends.
    func requestRefresh(origin: String, completion: Scheduler.Completion?) async -> Scheduler.RefreshOutcome

    /// Switches to `state`; returns once the scheduler has applied it.
    func applyPowerState(_ state: PowerState, origin: String) async
}

extension Scheduler: SchedulerCommands {}
