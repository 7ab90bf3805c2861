public import GeoAttrModel

extension Scheduler {
    /// What happened to a refresh request. A refused one is never queued. Outside the daemon an
    /// accepted request is said as the API's `"refresh": "started"`, the status's
    /// `refreshes_accepted` and the metric's `decision="accepted"`.
    public enum RefreshOutcome: Sendable, Hashable {
        /// The budget paid for it: a forced fix started for this request.
        case accepted
        /// A fix was already in flight; the request joins it and costs no token.
        case joined
        /// The refresh budget is spent; a token comes back after `retryAfter`.
        case refused(retryAfter: Duration)
    }

    /// How an attempt that a caller waited for ended: the new result, or why there is none.
    public typealias Completion = @Sendable (Result<LocationResult, FixError>) -> Void
}
