import Foundation

/// The `segments` command: `demo`, `serve`, `fetch` and `track`.
///
/// A library target (`SegmentsCommandLine`), not the executable: the `segments` executable is a
/// `main.swift` of one call (Sources/CLI/Main). A test target that linked an `@main` executable
/// could have its `main` run with the test runner's arguments (`--test-bundle-path …`), which
/// would print "unknown command" and end the whole test run with status 2.
public struct SegmentsCommand {
    static let usage = """
        usage: segments <command> [options]

        commands:
          demo     run the SDK against the embedded backend emulator and watch segments change
          serve    run the backend emulator in the foreground for app development
          fetch    read a customer's segments once from any backend, as JSON
          track    track numbered events through a client on a storage directory (crash testing)

        Run `segments <command> --help` for a command's options.
        """

    /// Runs the command named by `arguments` (the process's arguments after its name) and returns
    /// when it has ended, or exits the process: 2 for bad arguments, 1 for a failed command. On the
    /// main actor, as an `@main` type's `main` is.
    @MainActor public static func main(arguments: [String]) async {
        var arguments = arguments
        guard let command = arguments.first else {
            fail("no command given (try `segments --help`)")
        }
        arguments.removeFirst()
        do {
            switch command {
            case "demo": try await DemoCommand(arguments: arguments).run()
            case "serve": try ServeCommand(arguments: arguments).run()
            case "fetch": try await FetchCommand(arguments: arguments).run()
            case "track": try await TrackCommand(arguments: arguments).run()
            case "-h", "--help", "help": print(usage)
            // The word is not repeated: it may be a key pasted in the wrong place (see Behaviour P4).
            default: fail("unknown command: the first argument is none of demo, serve, fetch, track (try `segments --help`)")
            }
        } catch let error as UsageError {
            fail(error.reason)
        } catch {
            // An error's text can quote a server (a category name): escaped like every printed line.
            FileHandle.standardError.write(Data("segments \(command): \(TerminalText.line("\(error)"))\n".utf8))
            exit(1)
        }
    }

    /// Prints a one-line reason and exits with status 2, the convention for bad arguments.
    static func fail(_ reason: String) -> Never {
        FileHandle.standardError.write(Data("segments: \(reason)\n".utf8))
        exit(2)
    }
}

/// A bad command line.
struct UsageError: Error {
    let reason: String
}
