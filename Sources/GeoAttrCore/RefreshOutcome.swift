public import GeoAttrModel

extension Scheduler {
    /// What happened to a refresh request. A refused one is never queued.
    public enum RefreshOutcome: Sendable, Hashable {
        /// A forced fix started for this request.
        case started
        /// A fix was already in flight; the request joins it and costs no token.
        case joined
        /// The refresh budget is spent; a token comes back after `retryAfter`.
        case refused(retryAfter: Duration)
    }

    /// How an attempt that a caller waited for ended: the new result, or why there is none.
    public typealias Completion = @Sendable (Result<LocationResult, FixError>) -> Void
}
