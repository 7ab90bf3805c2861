public import GeoAttrModel
public import Logging
public import ServiceLifecycle

/// The daemon's heart: when to take a fix, what to serve, what to persist.
///
/// Everything arrives as an event in one stream (state changes, refresh requests, a finished
/// attempt, the next deadline, a new configuration) and is handled in order, so "the latest
/// event wins" holds by construction. Nothing polls: the only wake-up is a timer armed for the
/// next deadline, and none is armed in the background.
public actor Scheduler: Service {
    private enum Event: Sendable {
        case power(PowerState, origin: String, applied: (@Sendable () -> Void)?)
        case refresh(origin: String, reply: @Sendable (RefreshOutcome) -> Void, completion: Completion?)
        case reconfigure(ScheduleConfiguration, fixSource: (any FixSource)?)
        case staticLocation(StaticFixSource?)
        case attemptEnded(id: Int, Result<Fix, FixError>)
        case wake(sleeper: Int)
    }

    private struct Attempt {
        var id: Int
        var task: Task<Void, Never>
        var trigger: AttemptRecord.Trigger
        var startedAt: UTCTimestamp
    }

    private let events: AsyncStream<Event>.Continuation
    private let stream: AsyncStream<Event>
    private var fixSource: any FixSource
    private var staticSource: StaticFixSource?
    private let geocoders: GeocoderSlot
    private let cacheWriter: CacheWriter?
    private let store: AttributeStore
    private let logger: Logger
    private let random: @Sendable () -> Double

    private var configuration: ScheduleConfiguration
    private var power: PowerState
    private var budget: RefreshBudget
    private var policy: PlacePolicy
    private var failures = 0
    private var retryAt: ContinuousClock.Instant?
    private var inFlight: Attempt?
    private var waiters: [Completion] = []
    private var attemptCounter = 0
    private var timer = WakeTimer()
    private var generations = GenerationCounter()
    /// The static location is served only because the receiver failed: keep trying the receiver
    /// (on the backoff schedule) instead of waiting a whole TTL.
    private var servingFallback = false

    /// Creates the scheduler and serves the persisted cache at once, before any fix.
    ///
    /// - Parameters:
    ///   - fixSource: where fixes come from (gpsd, or the static location when there is no
    ///     receiver).
    ///   - staticSource: the configured static location, served when the receiver cannot
    ///     deliver and no last good result exists.
    ///   - cache: the persisted result; loaded from its store here, written through it after
    ///     every new result.
    ///   - initialPower: what the state file (or the configured default) says at start.
    ///   - random: jitter source in 0...1, injectable for tests.
    public init(
        configuration: ScheduleConfiguration,
        fixSource: any FixSource,
        staticSource: StaticFixSource?,
        geocoders: GeocoderSlot,
        cache: CacheWriter?,
        store: AttributeStore,
        initialPower: PowerState,
        logger: Logger,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        (stream, events) = AsyncStream.makeStream(of: Event.self)
        self.configuration = configuration
        self.fixSource = fixSource
        self.staticSource = staticSource
        self.geocoders = geocoders
        self.store = store
        self.logger = logger
        self.random = random
        power = initialPower
        budget = RefreshBudget(burst: configuration.refreshBurst, refillInterval: configuration.refreshInterval, now: .now)
        policy = PlacePolicy(stationaryDistanceMeters: configuration.stationaryDistanceMeters)
        cacheWriter = cache

        let restored = CachedResult.restore(from: cache?.store, configuration: configuration, logger: logger)
        if let restored {
            generations = GenerationCounter(last: restored.result.generation)
            store.publish(restored)
        }
        let budgetLeft = configuration.refreshBurst
        store.updateSchedulerStatus { status in
            status.powerState = initialPower
            status.refreshTokens = budgetLeft
        }
    }

    // MARK: Inputs (callable from anywhere)

    /// The device went to the foreground or the background (state file or signal).
    public nonisolated func setPowerState(_ state: PowerState, origin: String) {
        events.yield(.power(state, origin: origin, applied: nil))
    }

    /// Like `setPowerState`, returning once the change is in effect (for `PUT /v1/state`).
    public nonisolated func applyPowerState(_ state: PowerState, origin: String) async {
        await withCheckedContinuation { continuation in
            events.yield(.power(state, origin: origin, applied: { continuation.resume() }))
        }
    }

    /// A forced refresh (`SIGUSR1`, `POST /v1/refresh`). `completion`, when given, is called
    /// when the attempt this request started or joined ends.
    public nonisolated func requestRefresh(origin: String, completion: Completion? = nil) async -> RefreshOutcome {
        await withCheckedContinuation { continuation in
            events.yield(.refresh(origin: origin, reply: { continuation.resume(returning: $0) }, completion: completion))
        }
    }

    /// Applies a new configuration (SIGHUP) without losing the served result or the budget. A
    /// new fix source is used from the next attempt on.
    public nonisolated func reconfigure(_ configuration: ScheduleConfiguration, fixSource: (any FixSource)? = nil) {
        events.yield(.reconfigure(configuration, fixSource: fixSource))
    }

    /// Replaces the configured static location (SIGHUP): the fallback from the next failure on;
    /// a result already served stays until the next fix.
    public nonisolated func setStaticLocation(_ source: StaticFixSource?) {
        events.yield(.staticLocation(source))
    }

    /// Returns when the scheduler's actor is free to run: the systemd watchdog pings through
    /// this, so a wedged scheduler stops the pings and systemd restarts the daemon.
    public func heartbeat() {}

    // MARK: Service

    public func run() async {
        logger.info(
            "scheduler started",
            metadata: [
                "state": "\(power.rawValue)", "ttl_s": "\(configuration.ttl.components.seconds)",
                "cache": "\(store.served.map { "age \($0.age().components.seconds) s" } ?? "none")",
            ])
        reschedule()
        for await event in stream.cancelOnGracefulShutdown() {
            handle(event)
        }
        shutDown()
        // The last result accepted is the one a restart must serve: let its write finish.
        await cacheWriter?.finishWriting(timeout: .seconds(5))
    }

    private func shutDown() {
        timer.cancelAll()
        if let inFlight {
            logger.info("shutting down: cancelling the fix in flight")
            inFlight.task.cancel()
        }
        inFlight = nil
        completeWaiters(.failure(.cancelled))
        events.finish()
    }

    // MARK: Event handling

    private func handle(_ event: Event) {
        switch event {
        case .power(let state, let origin, let applied):
            changePower(to: state, origin: origin)
            applied?()
        case .refresh(let origin, let reply, let completion):
            refresh(origin: origin, reply: reply, completion: completion)
        case .reconfigure(let configuration, let fixSource):
            apply(configuration)
            if let fixSource { self.fixSource = fixSource }
        case .staticLocation(let source):
            staticSource = source
        case .attemptEnded(let id, let result):
            attemptEnded(id: id, result: result)
        case .wake(let sleeper):
            timer.sleeperWoke(sleeper)
        }
        reschedule()
    }

    private func changePower(to state: PowerState, origin: String) {
        guard state != power else {
            logger.debug("state unchanged", metadata: ["state": "\(state.rawValue)", "origin": "\(origin)"])
            return
        }
        logger.info("state changed", metadata: ["from": "\(power.rawValue)", "to": "\(state.rawValue)", "origin": "\(origin)"])
        power = state
        store.updateSchedulerStatus { $0.powerState = state }
        if state == .background, let attempt = inFlight {
            logger.info("background: cancelling the fix in flight and releasing gpsd")
            attempt.task.cancel()
            inFlight = nil
            store.updateSchedulerStatus { $0.fixInFlight = false }
            completeWaiters(.failure(.cancelled))
        }
    }

    private func refresh(origin: String, reply: @Sendable (RefreshOutcome) -> Void, completion: Completion?) {
        let now = ContinuousClock.now
        if inFlight != nil {
            logger.info("refresh requested: joins the fix in flight", metadata: ["origin": "\(origin)"])
            SchedulerMetrics.refresh(.joined)
            if let completion { waiters.append(completion) }
            reply(.joined)
            return
        }
        guard budget.take(at: now) else {
            let retryAfter = budget.retryAfter(at: now)
            logger.notice(
                "refresh refused: the refresh budget is spent",
                metadata: ["origin": "\(origin)", "retry_after_s": "\(retryAfter.components.seconds + 1)"])
            store.updateSchedulerStatus { $0.refreshesRefused += 1 }
            let outcome = RefreshOutcome.refused(retryAfter: retryAfter)
            SchedulerMetrics.refresh(outcome)
            reply(outcome)
            return
        }
        let left = budget.available(at: now)
        logger.info("refresh accepted: taking a fix now", metadata: ["origin": "\(origin)", "tokens_left": "\(left)"])
        SchedulerMetrics.refresh(.accepted)
        store.updateSchedulerStatus {
            $0.refreshesAccepted += 1
            $0.refreshTokens = left
        }
        if let completion { waiters.append(completion) }
        startAttempt(.refresh)
        reply(.accepted)
    }

    private func apply(_ new: ScheduleConfiguration) {
        let now = ContinuousClock.now
        budget = budget.reconfigured(burst: new.refreshBurst, refillInterval: new.refreshInterval, now: now)
        policy.stationaryDistanceMeters = new.stationaryDistanceMeters
        configuration = new
        let left = budget.available(at: now)
        store.updateSchedulerStatus { $0.refreshTokens = left }
        logger.info("schedule reconfigured", metadata: ["ttl_s": "\(new.ttl.components.seconds)"])
    }

    private func attemptEnded(id: Int, result: Result<Fix, FixError>) {
        guard let attempt = inFlight, attempt.id == id else { return }
        inFlight = nil
        SchedulerMetrics.attemptEnded(result)
        let endedAt = UTCTimestamp.now()
        switch result {
        case .success(let fix):
            // The result and the attempt that made it in one step.
            let published = publish(fix) {
                $0.fixInFlight = false
                $0.gpsdReachable = fix.origin == .gps ? true : $0.gpsdReachable
                $0.lastAttempt = AttemptRecord(
                    trigger: attempt.trigger, startedAt: attempt.startedAt, endedAt: endedAt, error: nil,
                    fallback: fix.acceptedAsFallback == true)
            }
            servingFallback = false
            failures = 0
            retryAt = nil
            completeWaiters(.success(published))
        case .failure(let error):
            logger.error("fix failed: \(error)", metadata: ["trigger": "\(attempt.trigger.rawValue)"])
            if attempt.trigger == .schedule {
                failures += 1
                let delay = RetryBackoff(initial: configuration.retryInitial, maximum: configuration.retryMaximum)
                    .delay(afterFailures: failures, unit: random())
                retryAt = .now + delay
                logger.info("retrying", metadata: ["in_s": "\(delay.components.seconds)", "failures": "\(failures)"])
            }
            store.updateSchedulerStatus {
                $0.fixInFlight = false
                if case .gpsdUnreachable = error { $0.gpsdReachable = false } else { $0.gpsdReachable = true }
                $0.lastAttempt = AttemptRecord(trigger: attempt.trigger, startedAt: attempt.startedAt, endedAt: endedAt, error: error)
            }
            fallBackToStaticIfNothingServed()
            completeWaiters(.failure(error))
        }
    }

    // MARK: Results

    /// `status`: the status changes that go with the result, published with it.
    @discardableResult
    private func publish(_ fix: Fix, status: ((inout SchedulerStatus) -> Void)? = nil) -> LocationResult {
        let previous = store.served?.result
        let geocoder = geocoders.geocoder
        let (place, decision) = policy.place(for: fix, previous: previous, geocoder: geocoder)
        if decision == .indexFailed, let geocoder, geocoders.fail(geocoder) {
            logger.error(
                "geocoder index changed while in service (its file shrank): serving location attributes only until it is whole and loaded again",
                metadata: ["index": "\(geocoder.indexVersion)"])
        }
        let result = LocationResult(
            fix: fix,
            place: place,
            source: fix.origin == .static ? .static : .gps,
            updatedAt: .now(),
            indexVersion: place == nil ? nil : geocoder?.indexVersion,
            generation: generations.next()
        )
        store.publish(ServedResult(result: result, obtainedAt: .now), status: status)
        Self.logAccepted(fix, result: result, decision: decision, logger: logger)
        cacheWriter?.submit(result)
        return result
    }

    /// The fallback chain when the receiver cannot deliver: the last good result (already
    /// served), then the configured static location.
    private func fallBackToStaticIfNothingServed() {
        guard store.served == nil, let staticSource else { return }
        logger.notice("no GPS result to serve: serving the configured static location")
        publish(staticSource.makeFix())
        servingFallback = true
    }

    private func completeWaiters(_ result: Result<LocationResult, FixError>) {
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter(result) }
    }

    // MARK: Scheduling

    /// Starts a fix when one is due, or arms the timer for when it will be. The timer is the
    /// only wake-up: the next fix, or the moment the served result expires.
    private func reschedule() {
        let now = ContinuousClock.now
        expireIfTooOld(now: now)
        timer.disarm()
        var wake = store.served.map { $0.obtainedAt + configuration.expireAfter }
        if inFlight == nil, power == .foreground {
            var due = now
            if let served = store.served, !servingFallback {
                due = served.obtainedAt + configuration.ttl
            }
            if let retryAt, retryAt > due { due = retryAt }
            if due <= now {
                startAttempt(.schedule)
            } else {
                let inSeconds = (due - now).components.seconds
                store.updateSchedulerStatus { $0.nextFixAt = UTCTimestamp.now().adding(seconds: inSeconds) }
                wake = min(wake ?? due, due)
            }
        } else {
            store.updateSchedulerStatus { $0.nextFixAt = nil }
        }
        if let wake { armTimer(at: wake) }
    }

    private func expireIfTooOld(now: ContinuousClock.Instant) {
        guard let served = store.served, served.age(at: now) >= configuration.expireAfter else { return }
        logger.warning(
            "the served result expired: withdrawn",
            metadata: ["age_s": "\(served.age(at: now).components.seconds)"])
        store.withdraw()
        fallBackToStaticIfNothingServed()
    }

    private func startAttempt(_ trigger: AttemptRecord.Trigger) {
        attemptCounter += 1
        let id = attemptCounter
        let source = fixSource
        let events = events
        let task = Task {
            let result: Result<Fix, FixError>
            do throws(FixError) {
                result = .success(try await source.fix())
            } catch {
                result = .failure(error)
            }
            events.yield(.attemptEnded(id: id, result))
        }
        inFlight = Attempt(id: id, task: task, trigger: trigger, startedAt: .now())
        store.updateSchedulerStatus {
            $0.fixInFlight = true
            $0.nextFixAt = nil
        }
        logger.info("taking a fix", metadata: ["trigger": "\(trigger.rawValue)"])
    }

    private func armTimer(at instant: ContinuousClock.Instant) {
        let events = events
        timer.arm(at: instant) { id, wakesAt in
            Task {
                do {
                    try await Task.sleep(until: wakesAt, clock: .continuous)
                } catch {
                    return
                }
                events.yield(.wake(sleeper: id))
            }
        }
    }
}
