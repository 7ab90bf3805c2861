public import Logging
public import ServiceLifecycle
public import ServiceLifecycleTestKit

/// Runs `services` in-process as one ServiceGroup, in that order, as the daemon runs its parts,
/// while `body` drives them and starts the graceful shutdown through `trigger`: what SIGTERM
/// starts in the daemon, without a process or a signal. The shutdown is triggered after `body`
/// in any case, so that a test that fails early does not hang. Returns when the group's run
/// ended, for a test that holds a service to something the shutdown waits for.
///
/// The group waits at most `maximumShutdown` (the daemon's bound) for its services to stop, then
/// cancels them: a service that does not stop by itself still ends the test, late.
public func runServiceGroup(
    _ services: [any Service], logger: Logger, maximumShutdown: Duration = .seconds(10),
    while body: (_ trigger: GracefulShutdownTestTrigger) async throws -> Void
) async throws -> ContinuousClock.Instant {
    var configuration = ServiceGroupConfiguration(services: services, logger: logger)
    configuration.maximumGracefulShutdownDuration = maximumShutdown
    let group = ServiceGroup(configuration: configuration)
    return try await testGracefulShutdown { trigger in
        try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { tasks in
            tasks.addTask {
                try await group.run()
                return .now
            }
            do {
                try await body(trigger)
            } catch {
                trigger.triggerGracefulShutdown()
                throw error
            }
            trigger.triggerGracefulShutdown()
            return try await tasks.next() ?? .now
        }
    }
}
