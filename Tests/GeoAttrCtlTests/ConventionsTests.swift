import GeoAttrModel
import GeoIndex
import Testing
import TestSupport

/// What users of command-line tools expect of both binaries: a version, completions that know
/// the values an option takes, every exit code in the help, and clear messages.
@Suite("command-line conventions")
struct ConventionsTests {
    static let geoattrd = BuiltProducts.path(of: "geoattrd")

    @Test("--version prints the release and the index format", arguments: [FixCommandTests.geoattrctl, geoattrd])
    func version(binary: String) async throws {
        let result = try await CommandResult.run(binary, ["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "\(ProductVersion.number) (index format \(IndexFormat.version))\n")
    }

    @Test("bash completion offers get --format's four values")
    func completionKnowsFormats() async throws {
        let script = try await CommandResult.run(FixCommandTests.geoattrctl, ["--generate-completion-script", "bash"])
        #expect(script.status == 0)
        let directory = try TemporaryDirectory(prefix: "completion")
        let path = try directory.write(script.stdout, to: "geoattrctl.bash")
        let completion = try await CommandResult.run(
            "/bin/bash",
            ["-c", #"source "$1"; COMP_WORDS=(geoattrctl get --format ""); COMP_CWORD=3; COMP_LINE="geoattrctl get --format "; COMP_POINT=${#COMP_LINE}; _geoattrctl geoattrctl "" --format; printf '%s\n' "${COMPREPLY[@]}""#, "bash", path])
        #expect(completion.status == 0, "\(completion.stderr)")
        #expect(completion.stdout.split(separator: "\n").sorted() == ["env", "json", "otel", "prometheus"])
    }

    /// The words bash completion offers for `words` (the last one being completed).
    static func bashCompletion(_ binary: String, _ words: [String]) async throws -> [String] {
        let name = binary.split(separator: "/").last.map(String.init) ?? binary
        let script = try await CommandResult.run(binary, ["--generate-completion-script", "bash"])
        let directory = try TemporaryDirectory(prefix: "completion")
        let path = try directory.write(script.stdout, to: "\(name).bash")
        let line = words.joined(separator: " ")
        let command = #"source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _"# + name
            + #" "$1" "${@: -1}" "${@: -2:1}"; printf '%s\n' "${COMPREPLY[@]}""#
        let completion = try await CommandResult.run("/bin/bash", ["-c", command, "bash", path] + words)
        #expect(completion.status == 0, "\(line): \(completion.stderr)")
        return completion.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test("bash completion offers the states after geoattrctl state, and the levels after geoattrd --log-level")
    func completionKnowsStatesAndLevels() async throws {
        #expect(try await Self.bashCompletion(FixCommandTests.geoattrctl, ["geoattrctl", "state", ""]) == ["background", "foreground"])
        #expect(
            try await Self.bashCompletion(Self.geoattrd, ["geoattrd", "--log-level", ""])
                == ["critical", "debug", "error", "info", "notice", "trace", "warning"])
    }

    @Test("the shared exit-code list names every code a subcommand documents")
    func sharedExitCodesAreComplete() async throws {
        let result = try await CommandResult.run(FixCommandTests.geoattrctl, ["--help"])
        for code in [0, 1, 64, 69, 71, 74, 75, 76, 77, 78] {
            #expect(result.stdout.contains("\n  \(code) "), "\(code) is missing: \(result.stdout)")
        }
    }

    @Test("every subcommand's help lists its exit codes", arguments: [
        ["get"], ["status"], ["watch"], ["refresh"], ["state"], ["reload"], ["doctor"], ["fix"], ["lookup"], ["index", "build"], ["index", "info"],
    ])
    func helpListsExitCodes(subcommand: [String]) async throws {
        let result = try await CommandResult.run(FixCommandTests.geoattrctl, ["help"] + subcommand)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Exit codes: 0 "), "\(result.stdout)")
    }

    @Test("lookup takes LAT,LON as --batch reads it, and LAT LON, with the same answer; out of range exits 2, a missing index 1")
    func lookupForms() async throws {
        let fixture = try Fixture.build()
        let spaced = try await CommandResult.run(FixCommandTests.geoattrctl, ["lookup", "1.5", "1.0", "--index", fixture.index])
        #expect(spaced.status == 0)
        #expect(spaced.stdout.contains(#""geo.country.iso_code":"AA""#), "\(spaced.stdout)")
        for form in ["1.5,1.0", "1.5, 1.0", " 1.5 ,1.0 "] {
            let comma = try await CommandResult.run(FixCommandTests.geoattrctl, ["lookup", form, "--index", fixture.index])
            #expect(comma.status == 0)
            #expect(comma.stdout == spaced.stdout, "\(form)")
        }
        let outOfRange = try await CommandResult.run(FixCommandTests.geoattrctl, ["lookup", "91", "0", "--index", fixture.index])
        #expect(outOfRange.status == 2)
        #expect(outOfRange.stdout.contains(#""error":"coordinates out of range"#))
        let missing = try await CommandResult.run(FixCommandTests.geoattrctl, ["lookup", "1", "1", "--index", fixture.directory + "/absent.gidx"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("absent.gidx"), "\(missing.stderr)")
    }

    @Test("an unreachable daemon: exit 69 and one sentence naming the socket and the system's reason")
    func unreachableMessage() async throws {
        let directory = try TemporaryDirectory(prefix: "unreachable")
        let result = try await CommandResult.run(FixCommandTests.geoattrctl, ["status", "--socket", directory.file("absent.sock")])
        #expect(result.status == 69)
        #expect(result.stderr == "geoattrctl: cannot reach geoattrd at \(directory.file("absent.sock")) (No such file or directory): is it running, and may this user open the socket?\n")
    }
}
