// The `segments` command. Its subcommands arrive with the facade issue (#5).
let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "demo":
    print("segments demo: coming soon (the CLI lands with the facade issue). Run `swift test` meanwhile.")
default:
    print("usage: segments demo")
}
