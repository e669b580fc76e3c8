import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if os(macOS) || os(Linux)  // starts child processes (`Process`)

/// What the `segments` command prints (issue 23, items 7 and 9): `segments fetch` writes only its
/// JSON to standard output — warnings go to standard error — and a stray argument is refused
/// without being repeated (it may be a key typed in the wrong place; see Behaviour P4).
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct CLIOutputTests {
    private struct Run {
        let status: Int32
        let output: Data
        let errors: String
    }

    private static func run(_ arguments: [String]) throws -> Run {
        let executable = try #require(SegmentsExecutable.url, "the segments executable is not beside the test bundle")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["SEGMENTS_API_KEY": "key"]) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Standard error is read on another thread, so neither pipe can fill up and stall the child.
        let errorText = Locked(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorText.withLock { $0 = data }
            errorsRead.signal()
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        _ = errorsRead.wait(timeout: .now() + 60)
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: out, errors: String(decoding: errorText.value, as: UTF8.self))
    }

    /// `segments fetch` against a server whose answer makes the decoder warn (a segment without
    /// `id`, in a category whose name holds a terminal escape and a line break).
    @Test func l1_fetchPrintsOnlyJSONOnStandardOutputWhenTheServerCausesAWarning() throws {
        let body = #"{"evil\u001b[31m\r\nx":[{"segmentation_id":"g1"}],"discovery":[{"id":"s1","segmentation_id":"g1"}]}"#
        let server = try OneAnswerServer(body: Data(body.utf8))

        let run = try Self.run([
            "fetch", "--project-token", "T", "--cookie", "c", "--base-url", "http://127.0.0.1:\(server.port)",
        ])

        #expect(server.served(), "the fetch reached the server")
        #expect(run.status == 0, "\(run.errors)")
        let json = try JSONSerialization.jsonObject(with: run.output) as? [String: Any]
        #expect(json?["discovery"] != nil, "standard output is the JSON alone: \(String(decoding: run.output, as: UTF8.self))")
        #expect(run.errors.contains("Ignored 1 segment(s)"), "the warning is on standard error: \(run.errors)")
        #expect(run.errors.contains(#"evil\u{1B}[31m\r\nx"#), "escaped: \(run.errors)")
        #expect(!run.errors.contains("\u{1B}"))
    }

    /// Issue 31 finding 9: a segment name with a right-to-left override (and its kin) from the
    /// server is written as a JSON escape, so the terminal shows `\u202E` instead of reversing the
    /// text; the JSON value is the same.
    @Test func l1_fetchWritesBidirectionalControlsFromTheServerAsJSONEscapes() throws {
        let name = "Safe\u{202E}gpj.exe\u{2067}x\u{2029}y\u{85}z\u{7F}"
        let body = try JSONSerialization.data(withJSONObject: ["discovery": [["id": name, "segmentation_id": "g\u{200F}1"]]])
        let server = try OneAnswerServer(body: body)

        let run = try Self.run([
            "fetch", "--project-token", "T", "--cookie", "c", "--base-url", "http://127.0.0.1:\(server.port)",
        ])

        #expect(run.status == 0, "\(run.errors)")
        let text = String(decoding: run.output, as: UTF8.self)
        #expect(!text.unicodeScalars.contains { $0.value >= 0x7F && LogLineEscaping.needsEscape($0) }, "\(text)")
        #expect(text.contains(#"Safe\u202Egpj.exe\u2067x\u2029y\u0085z\u007F"#), "\(text)")
        let json = try JSONSerialization.jsonObject(with: run.output) as? [String: [[String: String]]]
        #expect(json?["discovery"]?.first?["id"] == name, "the same value once parsed")
        #expect(json?["discovery"]?.first?["segmentation_id"] == "g\u{200F}1")
    }

    /// `segments demo` (issue 24 item 6): its segments come through a SegmentsModel's observation
    /// (M5), automatic flushing holds an event until the background, which uploads it within
    /// background time that is then ended (E2, E7), the return to the foreground refreshes (T11),
    /// and an offline stretch sends nothing, then one flush and a fresh read when the network
    /// returns (N1, N2).
    @Test func m5_e2_e7_t11_n1_n2_theDemoShowsTheModelABackgroundForegroundCycleAndAnOfflineStretch() throws {
        let run = try Self.run(["demo"])
        let text = String(decoding: run.output, as: UTF8.self)
        #expect(run.status == 0, "\(text)\n\(run.errors)")
        let expected = [
            "Observing a SegmentsModel of discovery, merchandising and content",
            "→ flushingMode = .automatic, then trackEvent(add_to_cart)\n",
            "  queued: 1, uploaded: 0\n",
            "→ the app goes to the background\n  background time asked for (\"RealtimeSegments flush\")\n  background time ended\n",
            "merchandising → Cart builders, Repeat carts\n  queued: 0, uploaded: 1\n",
            "discovery     → Big spenders, Browsers, Returning visitors\n  segments refreshed on the return: yes\n",
            "→ the network goes away; trackEvent(view_item), trackEvent(add_to_cart) while offline\n",
            "  flush() → failed at once: offline\n",
            "  getSegments(force: true) → failed at once: offline\n",
            "  queued: 2, uploaded: 0\n",
            "→ the network returns\n",
            "  queued: 0, uploaded: 2 (view_item, add_to_cart)\n",
            "  getSegments(force: true) → [\"big-spenders\", \"browsers\", \"returning-visitors\"], fetched from the backend: yes\n",
            "Done: segments changed because of tracked events.",
        ]
        var rest = text[...]
        for line in expected {
            let found = rest.range(of: line)
            #expect(found != nil, "the demo's output lacks, in order: \(line)\n\(text)")
            if let found { rest = rest[found.upperBound...] }
        }
        // A3, issue 36: the demo deletes its folder only once the client's disk work is done, so a
        // normal run logs no error and no warning but the documented one of the flushing mode (T8).
        let stopped = text.range(of: "→ stop(completion:), then the demo deletes its storage folder\n")
        let folderGone = text.range(of: "  the client's disk work is done\n  storage folder deleted\n")
        #expect(stopped != nil && folderGone != nil && stopped!.upperBound <= folderGone!.lowerBound, "\(text)")
        let logged = (text + "\n" + run.errors).split(separator: "\n")
            .filter { $0.contains("error:") || $0.contains("warning:") }
        let flushingMode = "Segments: Segment accuracy needs the immediate flushing mode"
        #expect(logged.allSatisfy { $0.contains("warning:") && $0.contains(flushingMode) }, "\(logged)")
    }

    @Test(arguments: [["fetch", "--project-token", "T"], ["track", "--project-token", "T"], ["serve"], ["demo"]])
    func p4_aStrayArgumentIsRefusedWithoutBeingRepeated(command: [String]) throws {
        let run = try Self.run(command + ["sk_live_MISTYPED_KEY"])

        #expect(run.status == 2)
        #expect(run.errors.contains("unexpected argument at position \(command.count)"), "\(run.errors)")
        #expect(!run.errors.contains("MISTYPED"), "\(run.errors)")
        #expect(run.output.isEmpty)
    }

    @Test func p4_anUnknownCommandOrOptionThatLooksLikeAKeyIsNotRepeated() throws {
        let command = try Self.run(["sk_live_MISTYPED_KEY"])
        let option = try Self.run(["fetch", "--sk_live_MISTYPED_KEY"])

        #expect(command.status == 2)
        #expect(option.status == 2)
        #expect(!command.errors.contains("MISTYPED"), "\(command.errors)")
        #expect(!option.errors.contains("MISTYPED"), "\(option.errors)")
        #expect(option.errors.contains("unknown option at position 1"), "\(option.errors)")
    }
}

/// A loopback HTTP peer that answers one request with a fixed JSON body, then closes. Its thread
/// owns every descriptor and gives up after 30 s without a connection, so a test never hangs on it.
private final class OneAnswerServer: Sendable {
    let port: UInt16
    private let done = DispatchSemaphore(value: 0)
    private let answered = Locked(false)

    init(body: Data) throws {
        #if os(Linux)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(listener >= 0)
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(listener, generic, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, generic, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw SocketFailure()
        }
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [done, answered] in
            defer {
                close(listener)
                done.signal()
            }
            var polled = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            guard poll(&polled, 1, 30_000) > 0 else { return }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            // Reads the request head (a GET has no body), waiting at most 30 s for each piece.
            var request = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !request.containsHeadEnd {
                var waiting = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
                guard poll(&waiting, 1, 30_000) > 0 else { return }
                let count = read(client, &buffer, buffer.count)
                guard count > 0 else { return }
                request += buffer[0..<count]
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            let reply = Array(head.utf8) + body
            var written = 0
            while written < reply.count {
                let count = reply[written...].withUnsafeBytes { write(client, $0.baseAddress!, $0.count) }
                guard count > 0 else { return }
                written += count
            }
            answered.withLock { $0 = true }
        }
    }

    /// Whether a request was answered; waits (bounded) for the server's thread to finish.
    func served() -> Bool {
        _ = done.wait(timeout: .now() + 40)
        return answered.value
    }

    struct SocketFailure: Error {}
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        guard count >= 4 else { return false }
        return (0...(count - 4)).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}

#endif
