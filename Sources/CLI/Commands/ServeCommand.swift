import Dispatch
import Foundation
import SegmentsEmulator

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `segments serve`: the backend emulator in the foreground, printing each request.
struct ServeCommand {
    static let help = """
        usage: segments serve [--port N] [--rules FILE]

        Runs the backend emulator on 127.0.0.1 until Ctrl-C, printing its base URL and each request.
          --port N       the port (default: any free port)
          --rules FILE   segment rules as JSON: {"rules": [{"category": "discovery", "segment_id": "s1",
                         "segmentation_id": "g1", "event_type": "view_item", "min_count": 1}]}
                         (default: the rules of `segments demo`)
        Point the SDK at the printed URL; plain http is allowed for loopback.
        """

    let arguments: Arguments

    init(arguments: [String]) throws {
        self.arguments = try Arguments(arguments, options: ["port", "rules"])
    }

    func run() throws {
        if arguments.wantsHelp { return print(Self.help) }
        var port: UInt16 = 0
        if let text = arguments.value("port") {
            guard let value = UInt16(text) else { throw UsageError(reason: "--port must be a number from 0 to 65535") }
            port = value
        }
        let emulator = SegmentsEmulator(port: port)
        if let rules = arguments.value("rules") {
            do { try emulator.loadRules(contentsOf: URL(fileURLWithPath: rules)) } catch {
                throw UsageError(reason: "cannot read rules from \(rules): \(error)")
            }
        } else {
            emulator.setRules(DemoRules.rules)
        }
        let baseURL = try emulator.start()
        emit("Segments emulator listening on \(baseURL.absoluteString)  (Ctrl-C stops it)")
        emit("  project: \(baseURL.absoluteString)/webxp/projects/<token>/segments?cookie=<cookie>")
        emit("  odp:     POST \(baseURL.absoluteString)/v3/graphql  (ODP audiences)")

        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        // Tracked by arrival time, not by count: the emulator keeps only the newest requests, so
        // a count stops moving once the log is full.
        var lastPrinted = Date.distantPast
        while stop.wait(timeout: .now() + 0.2) == .timedOut {
            for request in emulator.requests where request.receivedAt > lastPrinted {
                let query = request.rawQuery.map { "?\($0)" } ?? ""
                let line = "\(request.method) \(request.path)\(query)"
                emit("\(TerminalText.line(line))  (\(request.body.count) bytes)")
                lastPrinted = request.receivedAt
            }
        }
        sources.forEach { $0.cancel() }
        emulator.stop()
        emit("stopped")
    }

    /// Writes a line straight to standard output, so each request shows at once even in a pipe.
    private func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
