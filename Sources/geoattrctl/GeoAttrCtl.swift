import ArgumentParser

@main
struct GeoAttrCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoattrctl",
        abstract: "Operate geoattrd and query location attributes.",
        discussion: """
            Exit codes shared by the subcommands:
              0   success
              64  invalid arguments
              69  gpsd unreachable
              74  connection to gpsd lost during the fix
              75  no acceptable fix within the timeout (also: no satellite visible)
              71  the system refused a resource (thread, descriptor)
            """,
        subcommands: [FixCommand.self]
    )
}
