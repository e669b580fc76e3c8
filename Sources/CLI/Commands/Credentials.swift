import Foundation
import SegmentsDomain
import RealtimeSegments

/// Where the CLI takes an API key or token from (Behaviour P4 in `Docs/Behaviour.md`): the
/// environment variable `SEGMENTS_API_KEY` or a file named by `--api-key-file` — never the command
/// line, where `ps`, the shell history and process accounting would show it to other users and tools.
enum Credentials {
    /// The environment variable holding the key or token.
    static let environmentVariable = "SEGMENTS_API_KEY"
    /// The largest key file read.
    static let maximumKeyFileSize = 64 * 1024

    /// The help lines shared by the commands that authorize, descriptions starting at `column`.
    static func help(column: Int) -> String {
        func option(_ name: String, _ lines: [String]) -> String {
            let pad = String(repeating: " ", count: max(1, column - 2 - name.count))
            let indent = String(repeating: " ", count: column)
            return "  " + name + pad + lines.joined(separator: "\n" + indent)
        }
        return [
            option("--authorization S", [
                #"the scheme: "token" (Authorization: Token <key>), "bearer" or"#,
                #""none"; default "token" when a key is given, else "none""#,
            ]),
            option("--api-key-file F", ["read the key or token from file F (white space around it ignored)"]),
            "The key itself is never an argument (it would show in `ps` and the shell history): set",
            "\(environmentVariable) or use --api-key-file.",
        ].joined(separator: "\n")
    }

    /// The authorization for `--authorization` and the key from `--api-key-file` or the environment.
    static func authorization(
        scheme: String?, keyFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> BloomreachAuthorization {
        if let scheme, scheme.contains(" ") {
            throw UsageError(
                reason: "--authorization takes only the scheme (token, bearer or none); the key never goes on the "
                    + "command line: set \(environmentVariable) or use --api-key-file")
        }
        let key = try keyFile.map(readKey) ?? environment[environmentVariable].map(trimmed)
        switch (scheme?.lowercased() ?? (key == nil ? "none" : "token"), key) {
        case ("none", _):
            return .none
        case ("token", let key?) where !key.isEmpty:
            return .token(key)
        case ("bearer", let key?) where !key.isEmpty:
            return .bearer(key)
        case ("token", _), ("bearer", _):
            throw UsageError(reason: "no key: set \(environmentVariable) or use --api-key-file")
        default:
            throw UsageError(reason: "--authorization must be token, bearer or none")
        }
    }

    private static func readKey(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw UsageError(reason: "cannot read the --api-key-file")
        }
        defer { handle.closeFile() }
        let data = handle.readData(ofLength: maximumKeyFileSize + 1)
        guard data.count <= maximumKeyFileSize else { throw UsageError(reason: "the --api-key-file is too large") }
        let key = trimmed(String(decoding: data, as: UTF8.self))
        guard !key.isEmpty else { throw UsageError(reason: "the --api-key-file is empty") }
        return key
    }

    private static func trimmed(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
