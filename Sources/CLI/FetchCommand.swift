import Foundation
import RealtimeSegments

/// `segments fetch`: one read of a customer's segments from any Bloomreach-compatible backend.
struct FetchCommand {
    static let help = """
        usage: segments fetch --project-token T --authorization "Token K" --cookie C [--base-url U] [--category c]

        Reads the segments of the customer with cookie C once and prints them as JSON.
          --project-token T   the project token
          --authorization A   "Token <key>", "Bearer <token>" or "none"
          --cookie C          the customer's cookie (anonymous id)
          --base-url U        the API base URL (default https://api.exponea.com; http only for loopback)
          --category c        print only this category's list
        Exit status: 0 on success, 1 when the fetch fails, 2 on bad arguments.
        """

    let arguments: Arguments

    init(arguments: [String]) throws {
        self.arguments = try Arguments(
            arguments, options: ["project-token", "authorization", "cookie", "base-url", "category"])
    }

    func run() async throws {
        if arguments.wantsHelp { return print(Self.help) }
        let configuration = BloomreachConfiguration(
            integration: .project(token: try arguments.required("project-token")),
            baseURL: arguments.value("base-url") ?? BloomreachConfiguration.defaultBaseURL,
            authorization: try Self.authorization(try arguments.required("authorization")))
        do { try configuration.validate() } catch { throw UsageError(reason: "\(error)") }
        let cookie = try arguments.required("cookie")
        let scheduler = TaskScheduler()
        let repository = BloomreachSegmentRepository(
            configuration: configuration, transport: URLSessionSegmentsTransport(), scheduler: scheduler,
            clock: SystemClock(), logger: SegmentsLogHandler(level: .warning))
        let segments = try await repository.fetchSegments(for: CustomerIds(cookie: cookie))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let output: Data
        if let category = arguments.value("category") {
            output = try encoder.encode(segments[SegmentCategory(category)] ?? [])
        } else {
            output = try encoder.encode(Dictionary(uniqueKeysWithValues: segments.map { ($0.key.name, $0.value) }))
        }
        print(String(decoding: output, as: UTF8.self))
    }

    static func authorization(_ text: String) throws -> BloomreachAuthorization {
        let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
        switch (parts.first?.lowercased(), parts.count) {
        case ("none", 1): return .none
        case ("token", 2): return .token(parts[1])
        case ("bearer", 2): return .bearer(parts[1])
        default: throw UsageError(reason: "--authorization must be \"Token <key>\", \"Bearer <token>\" or \"none\"")
        }
    }
}
