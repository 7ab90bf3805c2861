public import ArgumentParser
import FoundationEssentials
import GeoAttrClient
import GeoAttrModel

/// `--socket`, shared by the commands that talk to the daemon.
struct ClientOptions: ParsableArguments {
    @Option(help: "geoattrd's API socket.")
    var socket: String = GeoAttrClient.defaultSocketPath

    var client: GeoAttrClient { GeoAttrClient(socketPath: socket) }
}

/// Maps client errors to the documented exit codes, with one line on stderr.
enum ClientFailure {
    static func exit(_ error: GeoAttrClientError) -> ExitCode {
        StandardStreams.err(error.description)
        switch error {
        case .unreachable: return ExitCodes.daemonUnreachable
        case .api(let status, _, _):
            switch status {
            case 403: return ExitCodes.forbidden
            case 429, 503: return ExitCodes.noFix
            default: return ExitCodes.protocolError
            }
        case .protocolError: return ExitCodes.protocolError
        }
    }
}

// The API's format names are the option's values.
extension AttributeFormat: ExpressibleByArgument {}

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the current geo attributes.",
        discussion: """
            Formats: \(AttributeFormat.allCases.map { "\($0.rawValue) (\($0.summary))" }.joined(separator: ", ")).

            Exit codes: 0 printed; 64 invalid arguments; 69 daemon unreachable; 75 no location yet; \
            77 not permitted; 76 unexpected answer.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: "The document's form.")
    var format: AttributeFormat = .json

    func run() async throws {
        do {
            let response = try await options.client.attributes(format: format)
            StandardStreams.writeRaw(response.body)
            // The JSON document ends without a newline; a terminal's prompt or a shell's
            // `while read` needs one.
            if response.body.last != UInt8(ascii: "\n") { StandardStreams.writeRaw([UInt8(ascii: "\n")]) }
        } catch {
            throw ClientFailure.exit(error)
        }
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print the daemon's status as JSON (state, last attempt, next fix, budget, gpsd, index).",
        discussion: "Exit codes: 0 printed; 69 daemon unreachable; 77 not permitted; 76 unexpected answer.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        do {
            StandardStreams.out(try await options.client.status().text)
        } catch {
            throw ClientFailure.exit(error)
        }
    }
}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the attributes as one JSON line now and one per change, until the daemon stops.",
        discussion: """
            When a reload changes what this user is granted, the daemon ends the stream and watch \
            connects again at once: the next line, if the attributes it may see changed, is at the \
            new level.

            Exit codes: 0 the daemon ended the stream (it stopped); 69 daemon unreachable; 75 no \
            location yet; 77 not permitted (also after a reload that refuses this user); 76 \
            unexpected answer.
            """)

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lastShown: AttributesDocument?
        do {
            var reconnect = true
            while reconnect {
                reconnect = false
                for try await event in options.client.watchEvents() {
                    switch event {
                    case .attributes(let document):
                        // A reconnection starts with the current result: printed only when the
                        // new grant shows it otherwise (its age alone has moved on).
                        let same = lastShown.map {
                            $0.generation == document.generation && $0.precision == document.precision && $0.attributes == document.attributes
                                && $0.errorM == document.errorM
                        }
                        if same != true { StandardStreams.out(String(decoding: try encoder.encode(document), as: UTF8.self)) }
                        lastShown = document
                    case .reconnect:
                        reconnect = true
                    }
                }
            }
        } catch let error as GeoAttrClientError {
            throw ClientFailure.exit(error)
        }
    }
}

struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Force a fix now (like SIGUSR1), within the refresh budget.",
        discussion: "Exit codes: 0 started, joined or (with --wait) done; 64 invalid arguments; 69 daemon unreachable; 75 budget spent or the fix failed; 77 not permitted; 76 unexpected answer.")

    @OptionGroup var options: ClientOptions

    @Option(help: "Wait up to this many seconds for the fix, and print the new attributes.")
    var wait: Double?

    func validate() throws {
        if let wait, !(wait >= 0 && wait <= 120) { throw ValidationError("--wait must be 0 to 120 seconds") }
    }

    func run() async throws {
        do {
            let response = try await options.client.refresh(wait: wait.map { .milliseconds(Int64($0 * 1000)) })
            StandardStreams.out(response.text)
        } catch {
            throw ClientFailure.exit(error)
        }
    }
}

struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Put the daemon in the foreground or the background (like the state file).",
        discussion: "Exit codes: 0 applied; 64 invalid arguments; 69 daemon unreachable; 77 not permitted; 76 unexpected answer.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "foreground or background", completion: .list(PowerState.allCases.map(\.rawValue)))
    var state: String

    func validate() throws {
        guard PowerState(rawValue: state) != nil else { throw ValidationError("the state must be foreground or background") }
    }

    func run() async throws {
        guard let powerState = PowerState(rawValue: state) else { throw ExitCodes.usage }
        do {
            StandardStreams.out(try await options.client.setState(powerState).text)
        } catch {
            throw ClientFailure.exit(error)
        }
    }
}

