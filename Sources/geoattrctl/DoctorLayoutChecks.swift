import GeoAttrLinux
import GeoAttrModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Doctor's checks of the runtime layout: who can write the socket's directory and the state
/// file, against what the shipped units make.
extension DoctorCommand {
    /// The socket's directory and the state file, as the shipped units lay them out
    /// (tmpfiles.d/geoattrd.conf): /run/geoattrd geoattrd:geoattrd 0755, written by the daemon
    /// alone; the state file a regular file geoattrd:geoattr-state 0660, written in place by the
    /// device supervisors. Examined with lstat: nothing is followed.
    func runtimeLayoutFindings() -> [Finding] {
        let socket = FileStatus(path: options.socket)
        // The clients' group: the socket's, or the shipped one when there is no socket to ask.
        let clientGroup = socket.status?.st_gid ?? AccountNames.gid(named: "geoattr")
        // The daemon's user: the socket's owner, or the shipped one.
        let daemonUser = socket.status?.st_uid ?? AccountNames.uid(named: "geoattrd")
        return runtimeDirectoryFindings(clientGroup: clientGroup, daemonUser: daemonUser)
            + stateFileFindings(clientGroup: clientGroup, daemonUser: daemonUser)
    }

    private static let shippedLayout = "systemd-tmpfiles --create geoattrd.conf (as root)"

    /// The socket's directory: written by the daemon alone.
    private func runtimeDirectoryFindings(clientGroup: UInt32?, daemonUser: UInt32?) -> [Finding] {
        let shipped = Self.shippedLayout
        var findings: [Finding] = []
        let directory = PathComponents.split(options.socket).directory
        let inRunDirectory = directory == ProductPaths.runtimeDirectory
        let dirFix = { (local: String) in inRunDirectory ? "\(shipped): geoattrd:geoattrd 0755" : local }
        let dir = FileStatus(path: directory)
        if let status = dir.status {
            let mode = status.st_mode
            let described = "\(directory) \(Self.owners(status)) \(Self.octal(mode))"
            var problems: [Finding] = []
            if mode & S_IFMT != S_IFDIR {
                problems.append(Finding(
                    level: .failure, check: "runtime dir", detail: "\(directory) is \(FileKind.name(of: mode)), not a directory",
                    fix: dirFix("pass --socket with the daemon's socket path")))
            } else {
                if mode & 0o002 != 0 {
                    problems.append(Finding(
                        level: .failure, check: "runtime dir",
                        detail: "\(described) is writable by others: any user can move the socket aside and bind their own, or plant a FIFO or symbolic link",
                        fix: dirFix("chmod o-w \(directory)")))
                }
                if mode & 0o020 != 0 {
                    let clients = status.st_gid == clientGroup
                    problems.append(Finding(
                        level: clients ? .failure : .warning, check: "runtime dir",
                        detail: clients
                            ? "\(described) is writable by group \(AccountNames.groupName(status.st_gid)), the socket's group: any client can move the socket aside and bind its own, or plant a FIFO or symbolic link"
                            : "\(described) is writable by group \(AccountNames.groupName(status.st_gid)): its members can replace the socket",
                        fix: dirFix("chmod g-w \(directory)")))
                }
                if let daemonUser, status.st_uid != 0, status.st_uid != daemonUser {
                    problems.append(Finding(
                        level: .failure, check: "runtime dir",
                        detail: "\(described) is owned by \(AccountNames.userName(status.st_uid)), neither root nor the socket's owner \(AccountNames.userName(daemonUser)): that user can replace the socket",
                        fix: dirFix("chown \(AccountNames.userName(daemonUser)) \(directory)")))
                }
            }
            findings += problems.isEmpty
                ? [Finding(level: .ok, check: "runtime dir", detail: "\(described), written by its owner alone")]
                : problems
        } else {
            findings.append(Finding(
                level: .warning, check: "runtime dir", detail: "cannot examine \(directory): \(dir.error)",
                fix: inRunDirectory ? "\(shipped) creates it" : "pass --socket with the daemon's socket path"))
        }
        return findings
    }

    /// The state file: a regular file, written in place by the device's supervisors.
    private func stateFileFindings(clientGroup: UInt32?, daemonUser: UInt32?) -> [Finding] {
        let shipped = Self.shippedLayout
        var findings: [Finding] = []
        let inPlace = "systemd-tmpfiles --create geoattrd.conf (as root) makes it geoattrd:geoattr-state 0660; supervisors in group geoattr-state (usermod -aG geoattr-state USER) write it in place"
        let state = FileStatus(path: stateFile)
        guard let status = state.status else {
            if state.code == ENOENT {
                findings.append(Finding(
                    level: .warning, check: "state file",
                    detail: "\(stateFile) does not exist: the daemon follows state.default, and a supervisor may not be able to create it",
                    fix: "\(shipped) creates it, empty; or pass --state-file with the daemon's state.file"))
            } else {
                findings.append(Finding(
                    level: .warning, check: "state file", detail: "cannot examine \(stateFile): \(state.error)",
                    fix: "run geoattrctl doctor as root, or as a member of geoattr-state"))
            }
            return findings
        }
        let mode = status.st_mode
        let described = "\(stateFile) \(Self.owners(status)) \(Self.octal(mode))"
        let remove = mode & S_IFMT == S_IFDIR ? "rm -r" : "rm"
        let replace = "\(remove) \(stateFile) (as root; nothing is followed), then \(shipped) creates a regular file in its place"
        if mode & S_IFMT == S_IFLNK {
            findings.append(Finding(
                level: .failure, check: "state file",
                detail: "\(stateFile) is a symbolic link: the daemon refuses it and ignores the state written through it", fix: replace))
            return findings
        }
        if mode & S_IFMT != S_IFREG {
            findings.append(Finding(
                level: .failure, check: "state file",
                detail: "\(stateFile) is \(FileKind.name(of: mode)), not a regular file: the daemon refuses it", fix: replace))
            return findings
        }
        var problems: [Finding] = []
        if mode & 0o002 != 0 {
            problems.append(Finding(
                level: .warning, check: "state file", detail: "\(described) is writable by others: any user can pause the device", fix: inPlace))
        }
        if status.st_gid == clientGroup, mode & 0o020 != 0 {
            problems.append(Finding(
                level: .warning, check: "state file",
                detail: "\(described): its group is the socket's, \(AccountNames.groupName(status.st_gid)): every client can pause the device",
                fix: inPlace))
        }
        if let daemonUser, status.st_uid != 0, status.st_uid != daemonUser {
            problems.append(Finding(
                level: .warning, check: "state file",
                detail: "\(described) is owned by \(AccountNames.userName(status.st_uid)), who can change its mode and group", fix: inPlace))
        }
        // Replaced by rename (or written by hand) as root, the file is root's, 0644 or so: the
        // daemon may still read it, but no supervisor can write it any more.
        // The kernel applies the first class that matches: owner, then group, then others.
        let daemonReads: Bool
        if let daemonUser, status.st_uid == daemonUser {
            daemonReads = mode & 0o400 != 0
        } else if let daemonUser, AccountNames.isMember(daemonUser, of: status.st_gid) {
            daemonReads = mode & 0o040 != 0
        } else {
            daemonReads = mode & 0o004 != 0
        }
        if let daemonUser, !daemonReads {
            problems.append(Finding(
                level: .failure, check: "state file",
                detail: "\(described): the daemon (\(AccountNames.userName(daemonUser))) cannot read it, and follows state.default", fix: inPlace))
        }
        // The shipped layout's file only: a state file elsewhere is the operator's own design.
        if stateFile == ProductPaths.stateFile, let supervisors = AccountNames.gid(named: "geoattr-state"),
            status.st_gid != supervisors || mode & 0o020 == 0
        {
            problems.append(Finding(
                level: .warning, check: "state file",
                detail: "\(described): supervisors in group geoattr-state cannot write it (replaced by rename, or made by hand?)",
                fix: "\(inPlace), never by rename (printf background > \(stateFile))"))
        }
        findings += problems.isEmpty
            ? [Finding(level: .ok, check: "state file", detail: "\(described), a regular file")]
            : problems
        return findings
    }

    /// What lstat says of a path, or why it could not say.
    struct FileStatus {
        var status: stat?
        var code: Int32 = 0
        var error: String { String(cString: strerror(code)) }

        init(path: String) {
            var status = stat()
            if lstat(path, &status) == 0 {
                self.status = status
            } else {
                code = errno
            }
        }
    }

    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func owners(_ status: stat) -> String { "\(AccountNames.userName(status.st_uid)):\(AccountNames.groupName(status.st_gid))" }
}
