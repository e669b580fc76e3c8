import Foundation
import SegmentsDomain
import RealtimeSegments

/// `segments track`: tracks numbered events through a client on a storage directory and reports
/// each one as soon as `trackEvent` accepted it; the crash test (Docs/Reliability.md) kills it
/// at random moments and checks that every reported event reaches the backend.
struct TrackCommand {
    static let help = """
        usage: segments track --base-url U --project-token T --storage DIR [--count N] [--prefix P]
                              [--authorization S] [--api-key-file F] [--event-type E]
                              [--retry SECONDS] [--flush] [--timeout SECONDS] [--hold]

        Configures a client against a Bloomreach-compatible backend with its files in DIR (the
        queue left by an earlier run is loaded and uploaded), tracks N events of type E whose
        property `seq` is "P-0", "P-1", …, and prints `accepted <seq>` as soon as each trackEvent
        returns: the event is then durably queued. Then it waits until the queue is empty.
          --base-url U          the API base URL (http only for loopback)
          --project-token T     the project token
          --storage DIR         the storage directory (created if missing)
          --count N             events to track (default 10; 0 only uploads what is queued)
          --prefix P            the first part of each `seq` (default "run")
          --event-type E        the event type (default crash_test)
          --retry SECONDS       the first upload retry delay, more than 0 (default: the SDK's, 2)
          --flush               call flush() after the last event as well
          --timeout SECONDS     how long to wait for the queue to empty (default 10)
          --hold                once the queue is empty, keep running (and owning DIR) until killed
        \(Credentials.help(column: 24))
        Output: `loaded <n>` (items queued from earlier runs), one `accepted <seq>` per event, then
        `queue empty`. Exit status: 0 when the queue emptied, 1 on a failure or time-out (also when
        another process uses DIR: one process at a time owns a storage directory), 2 on bad arguments.
        """

    let arguments: Arguments

    init(arguments: [String]) throws {
        self.arguments = try Arguments(
            arguments,
            options: [
                "base-url", "project-token", "storage", "count", "prefix", "authorization", "api-key-file", "event-type",
                "retry",
                "timeout",
            ],
            flags: ["flush", "hold"])
    }

    func run() async throws {
        if arguments.wantsHelp { return print(Self.help) }
        let configuration = BloomreachConfiguration(
            integration: .project(token: try arguments.required("project-token")),
            baseURL: try arguments.required("base-url"),
            authorization: try Credentials.authorization(
                scheme: arguments.value("authorization"), keyFile: arguments.value("api-key-file")))
        do { try configuration.validate() } catch { throw UsageError(reason: "\(error)") }
        let storage = URL(fileURLWithPath: try arguments.required("storage"), isDirectory: true)
        let count = try number("count", default: 10, in: 0...1_000_000)
        let prefix = arguments.value("prefix") ?? "run"
        let eventType = arguments.value("event-type") ?? "crash_test"
        guard !eventType.isEmpty else { throw UsageError(reason: "--event-type must not be empty") }
        let retry = try seconds("retry", default: RetryBackoff().initial)
        // A zero backoff retries a failing upload in a tight loop (see Behaviour P7).
        guard retry > 0 else { throw UsageError(reason: "--retry must be more than 0 seconds") }
        let timeout = try seconds("timeout", default: 10)

        let client = SegmentsClient(
            options: .init(runtime: SegmentsRuntime(logger: SinkSegmentsLogger(level: .warning, sink: StandardErrorLogger())), uploadRetry: RetryBackoff(initial: retry, maximum: max(retry, 1)), storage: .directory(storage)))
        // Never `stop()`ped: that would delete the segment baseline. Exiting is a plain restart.
        try client.configure(.init(backend: .bloomreach(configuration)))
        emit("loaded \(await client.countQueuedEvents())")

        for index in 0..<count {
            let seq = "\(prefix)-\(index)"
            try client.trackEvent(properties: ["seq": .string(seq)], timestamp: nil, eventType: eventType)
            emit("accepted \(seq)")
        }
        if arguments.flag("flush") {
            if case .failure(let error) = await client.flush() {
                FileHandle.standardError.write(Data("segments track: flush failed: \(error)\n".utf8))
            }
        }

        let deadline = Date().addingTimeInterval(timeout)
        while await client.countQueuedEvents() > 0 && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let left = await client.countQueuedEvents()
        guard left == 0 else { throw TrackTimeout(left: left, seconds: timeout) }
        emit("queue empty")
        // The crash test kills a child that owns the directory, whatever it is doing (see Behaviour P5, E4).
        while arguments.flag("hold") { try await Task.sleep(nanoseconds: 1_000_000_000) }
    }

    private func number(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = arguments.value(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(reason: "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    private func seconds(_ name: String, default value: TimeInterval) throws -> TimeInterval {
        guard let text = arguments.value(name) else { return value }
        guard let number = TimeInterval(text), number >= 0, number <= 3600 else {
            throw UsageError(reason: "--\(name) must be a number of seconds from 0 to 3600")
        }
        return number
    }

    /// Writes a line straight to standard output, unbuffered: a line that was printed is a promise
    /// the crash test checks even when the process is killed right after.
    private func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

struct TrackTimeout: Error, CustomStringConvertible {
    let left: Int
    let seconds: TimeInterval
    var description: String { "\(left) item(s) still queued after \(seconds) s" }
}
