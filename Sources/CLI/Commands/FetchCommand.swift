import Foundation
import SegmentsDomain
import RealtimeSegments

/// `segments fetch`: one read of a customer's segments from any Bloomreach-compatible backend.
struct FetchCommand {
    static let help = """
        usage: segments fetch --project-token T --cookie C [--authorization S] [--api-key-file F]
                              [--base-url U] [--category c]

        Reads the segments of the customer with cookie C once and prints them as JSON on standard
        output (only the JSON: warnings go to standard error).
          --project-token T   the project token
          --cookie C          the customer's cookie (anonymous id)
          --base-url U        the API base URL (default https://api.exponea.com; http only for loopback)
          --category c        print only this category's list
        \(Credentials.help(column: 22))
        Example: SEGMENTS_API_KEY=… segments fetch --project-token T --cookie C
        Exit status: 0 on success, 1 when the fetch fails, 2 on bad arguments.
        """

    let arguments: Arguments

    init(arguments: [String]) throws {
        self.arguments = try Arguments(
            arguments, options: ["project-token", "authorization", "api-key-file", "cookie", "base-url", "category"])
    }

    func run() async throws {
        if arguments.wantsHelp { return print(Self.help) }
        let configuration = BloomreachConfiguration(
            integration: .project(token: try arguments.required("project-token")),
            baseURL: arguments.value("base-url") ?? BloomreachConfiguration.defaultBaseURL,
            authorization: try Credentials.authorization(
                scheme: arguments.value("authorization"), keyFile: arguments.value("api-key-file")))
        do { try configuration.validate() } catch { throw UsageError(reason: "\(error)") }
        let cookie = try arguments.required("cookie")
        let scheduler = TaskScheduler()
        let repository = BloomreachSegmentRepository(
            configuration: configuration, transport: URLSessionSegmentsTransport(), scheduler: scheduler,
            clock: SystemClock(), logger: SinkSegmentsLogger(level: .warning, sink: StandardErrorLogger()))
        let segments = try await repository.fetchSegments(for: CustomerIds(cookie: cookie))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let output: Data
        if let category = arguments.value("category") {
            output = try encoder.encode(segments[SegmentCategory(category)] ?? [])
        } else {
            output = try encoder.encode(Dictionary(uniqueKeysWithValues: segments.map { ($0.key.name, $0.value) }))
        }
        print(TerminalText.json(String(decoding: output, as: UTF8.self)))
    }
}
