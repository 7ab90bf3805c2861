import ArgumentParser
import GeoAttrModel
import GeoIndex

/// The root command; ProgramEntry runs it.
struct GeoAttrCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoattrctl",
        abstract: "Operate geoattrd and query location attributes.",
        discussion: """
            Exit codes shared by the subcommands:
              0   success
              1   a check failed (doctor); an index missing, invalid or unwritable
              64  invalid arguments
              69  unreachable: gpsd, the daemon's socket, or its process (reload)
              70  no arguments reached the program, not even its name
              71  the system refused a resource (thread, descriptor)
              74  connection to gpsd lost during the fix
              75  no location or fix yet, refresh budget spent, no answer to reload
              76  unexpected answer from the daemon
              77  not permitted (access rules; signalling the daemon)
              78  the daemon refused the configuration (reload)
            """,
        version: "\(ProductVersion.number) (index format \(IndexFormat.version))",
        subcommands: [GetCommand.self, StatusCommand.self, WatchCommand.self, RefreshCommand.self, StateCommand.self, ReloadCommand.self, DoctorCommand.self, FixCommand.self, LookupCommand.self, IndexCommand.self]
    )
}
