import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if os(macOS) || os(Linux)  // starts child processes (`Process`)

/// `segments serve` prints every request path; a client must not be able to drive the developer's
/// terminal with escape sequences hidden in a path (issue 13).
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct ServeCommandTests {
    /// Issue 31 finding 9 added the bidirectional controls: U+202E reverses what follows on screen,
    /// U+2066 isolates it. (U+2028 cannot be sent: the emulator's request line ends at it.)
    @Test func l1_controlCharactersAndBidirectionalControlsInARequestPathArePrintedEscaped() async throws {
        let executable = try #require(SegmentsExecutable.url, "the segments executable is not beside the test bundle")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        let lines = LineReader(output.fileHandleForReading)
        let banner = try #require(lines.next(), "no banner")
        let port = try #require(
            banner.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) }, "no port in \(banner)")

        // ESC [2J clears the screen, ESC ]0; sets the window title, BEL ends it.
        let path = "/x\u{1B}[2J\u{1B}]0;owned\u{07}y\u{202E}gpj.exe\u{2066}z\\u{41}"
        try Self.request("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: port)

        var printed: String?
        while let line = lines.next() {
            if line.hasPrefix("GET ") {
                printed = line
                break
            }
        }
        let line = try #require(printed, "the request was not printed")
        #expect(!line.unicodeScalars.contains { LogLineEscaping.needsEscape($0) }, "\(line.unicodeScalars.map(\.value))")
        #expect(line.contains(#"/x\u{1B}[2J\u{1B}]0;owned\u{7}y\u{202E}gpj.exe\u{2066}z\\u{41}"#), "\(line)")
    }

    private static func request(_ text: String, port: UInt16) throws {
        let fd = EmulatorPOSIX.makeStreamSocket()
        try #require(fd >= 0)
        defer { close(fd) }
        let connected = EmulatorPOSIX.connectToLoopback(fd, port: port)
        try #require(connected == 0)
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var sink = [UInt8](repeating: 0, count: 4096)
        _ = recv(fd, &sink, sink.count, 0)
    }
}

#endif
