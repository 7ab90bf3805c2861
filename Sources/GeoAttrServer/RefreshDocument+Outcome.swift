import GeoAttrCore
import GeoAttrModel

extension RefreshDocument {
    /// The API's word for each outcome: an accepted request is `started` on the wire.
    init(outcome: Scheduler.RefreshOutcome, stillRunning: Bool? = nil) {
        let decision: Decision =
            switch outcome {
            case .accepted: .started
            case .joined: .joined
            case .refused: .refused
            }
        self.init(refresh: decision, stillRunning: stillRunning)
    }
}
