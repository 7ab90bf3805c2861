import ArgumentParser
import GeoAttrModel
import GeoIndex

@main
struct GeoAttrCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoattrctl",
        abstract: "Operate geoattrd and query location attributes.",
        discussion: """
            Exit codes shared by the subcommands:
              0   success
              64  invalid arguments
              69  unreachable: gpsd (fix) or the daemon's socket (get, status, watch, refresh, state)
              71  the system refused a resource (thread, descriptor)
              74  connection to gpsd lost during the fix
              75  no location yet, no acceptable fix in time, or the refresh budget is spent
              76  unexpected answer from the daemon
              77  not permitted (the daemon's access rules)
            """,
        version: "\(ProductVersion.number) (index format \(IndexFormat.version))",
        subcommands: [GetCommand.self, StatusCommand.self, WatchCommand.self, RefreshCommand.self, StateCommand.self, DoctorCommand.self, FixCommand.self, LookupCommand.self, IndexCommand.self]
    )
}
