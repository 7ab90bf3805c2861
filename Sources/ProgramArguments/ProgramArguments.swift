import CProgramArguments

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The arguments a command-line tool parses, without /proc.
///
/// `CommandLine.arguments` is found through /proc on Linux: in a chroot without /proc it
/// is empty, and a tool parsing it would act as if called with no arguments at all (geoattrd
/// would run the daemon, geoattrctl print its help and exit 0). The arguments glibc passed to the
/// executable's constructors are read instead (CProgramArguments); a process that still has
/// none says so and exits with EX_SOFTWARE, never acting on nothing.
public enum ProgramArguments {
    /// sysexits.h's EX_SOFTWARE: the program could not read what it was asked.
    public static let noArgumentsExitCode: Int32 = 70

    /// The arguments after the program's name, from glibc's constructor call, or from
    /// `CommandLine` where no constructor ran.
    public static func captured() -> [String]? {
        let count = CProgramArguments_count()
        // Linux (5.18 and later) starts a program exec'd with no arguments at all with one empty
        // string in their place: no program is named "", so that is no arguments too.
        if count == 1, CProgramArguments_argument(0).map({ $0.pointee == 0 }) ?? true { return nil }
        if count >= 1 {
            var arguments: [String] = []
            arguments.reserveCapacity(Int(count) - 1)
            for index in 1..<count {
                guard let argument = CProgramArguments_argument(index) else { return nil }
                arguments.append(String(cString: argument))
            }
            return arguments
        }
        if count == -1, let name = CommandLine.arguments.first, !name.isEmpty {
            return Array(CommandLine.arguments.dropFirst())
        }
        return nil
    }

    /// The arguments after the program's name; a process without any (not even its own name)
    /// is told so on standard error and exits 70.
    public static func orExit(tool: String) -> [String] {
        if let arguments = captured() { return arguments }
        let message = "\(tool): no command-line arguments reached the program (not even its name): it cannot tell what it was asked to do\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(noArgumentsExitCode)
    }
}
