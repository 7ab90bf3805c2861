import GeoAttrCore
import GeoAttrModel

extension RefreshDocument {
    init(outcome: Scheduler.RefreshOutcome, stillRunning: Bool? = nil) {
        let decision: Decision =
            switch outcome {
            case .started: .started
            case .joined: .joined
            case .refused: .refused
            }
        self.init(refresh: decision, stillRunning: stillRunning)
    }
}
