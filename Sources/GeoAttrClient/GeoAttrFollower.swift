public import GeoAttrModel
public import Logging
import Synchronization

/// The daemon's current attributes, kept in memory by following `GET /v1/watch`, for code that
/// must not wait: every log record's metadata, every span's attributes.
///
/// Reading never does I/O, blocks or throws. While no location is known, or the daemon was never
/// reached, there is nothing to read: the attributes are left out, not invented. When the daemon
/// goes away, the attributes last received stay until it answers again.
public final class GeoAttrFollower: Sendable {
    private let client: GeoAttrClient
    private let initialRetry: Duration
    private let maximumRetry: Duration
    private let logger: Logger?
    private let current = Mutex<[String: AttributeValue]>([:])

    /// - Parameters:
    ///   - client: the daemon's socket (`GeoAttrClient.defaultSocketPath` unless given).
    ///   - initialRetry: the wait before the first reconnection; it doubles after each failure
    ///     that follows, up to `maximumRetry`, and starts again once an update arrives.
    ///   - logger: where the follower says that it lost the daemon (once per distinct failure)
    ///     and found it again; `nil`: silent.
    public init(
        client: GeoAttrClient = GeoAttrClient(), initialRetry: Duration = .milliseconds(100), maximumRetry: Duration = .seconds(30),
        logger: Logger? = nil
    ) {
        self.client = client
        self.initialRetry = initialRetry
        self.maximumRetry = max(initialRetry, maximumRetry)
        self.logger = logger
    }

    /// The attributes received last, by their semantic-convention names; empty while none.
    public var attributes: [String: AttributeValue] {
        current.withLock { $0 }
    }

    /// Adds the current `geo.*` attributes to every record of a swift-log `Logger` that uses it;
    /// none while no location is known.
    public var metadataProvider: Logger.MetadataProvider {
        Logger.MetadataProvider { [self] in
            var metadata: Logger.Metadata = [:]
            for (name, value) in attributes {
                switch value {
                case .string(let text): metadata[name] = .string(text)
                case .double(let number): metadata[name] = .stringConvertible(number)
                }
            }
            return metadata
        }
    }

    /// Follows the daemon until the task is cancelled, reconnecting after every failure.
    public func run() async {
        var retry = initialRetry
        var lastFailure: String?
        while !Task.isCancelled {
            let failure: String
            var reconnectNow = false
            do {
                for try await event in client.watchEvents() {
                    switch event {
                    case .attributes(let document):
                        current.withLock { $0 = document.attributes }
                        retry = initialRetry
                        if lastFailure != nil {
                            logger?.info("following geoattrd again", metadata: ["socket": "\(client.socketPath)"])
                            lastFailure = nil
                        }
                    case .reconnect:
                        reconnectNow = true
                    }
                }
                failure = "geoattrd ended the stream"
            } catch {
                failure = "\(error)"
                // Refused: a reload took this process's access away. What it was granted before
                // must not go on being stamped on its records.
                if case GeoAttrClientError.api(status: 403, _, _) = error {
                    current.withLock { $0 = [:] }
                }
            }
            if Task.isCancelled { return }
            // A reload changed this process's grant: the new one applies from the next connection.
            if reconnectNow { continue }
            if failure != lastFailure {
                logger?.notice(
                    "lost geoattrd, keeping the attributes last received: \(failure)",
                    metadata: ["socket": "\(client.socketPath)", "retry": "\(retry)"])
                lastFailure = failure
            }
            logger?.debug("reconnecting to geoattrd", metadata: ["in": "\(retry)"])
            do {
                try await Task.sleep(for: retry)
            } catch {
                return
            }
            retry = min(retry * 2, maximumRetry)
        }
    }
}
