import Configuration
import Synchronization

/// Records values that were present but unusable (a word where a number belongs), which the
/// reader methods with defaults would otherwise replace by the default without a word.
final class FailureRecorder: AccessReporter, Sendable {
    struct Failure: Sendable {
        var key: String
        var problem: String
    }

    private let failures = Mutex<[Failure]>([])

    var first: Failure? { failures.withLock { $0.first } }

    func report(_ event: AccessEvent) {
        let key = event.metadata.key.components.joined(separator: ".")
        var problem: String?
        if let conversionError = event.conversionError {
            problem = "expected \(event.metadata.valueType); \(conversionError)"
        } else if case .failure(let error) = event.result {
            problem = "\(error)"
        } else {
            for provider in event.providerResults {
                if case .failure(let error) = provider.result {
                    problem = "from \(provider.providerName): \(error)"
                    break
                }
            }
        }
        guard let problem else { return }
        failures.withLock { $0.append(Failure(key: key, problem: problem)) }
    }
}

