import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `segments serve` prints every request path; a client must not be able to drive the developer's
/// terminal with escape sequences hidden in a path (issue 13).
@Suite(Hang.timeLimit(minutes: 2)) struct ServeCommandTests {
    @Test func controlCharactersInARequestPathArePrintedEscaped() async throws {
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
        let path = "/x\u{1B}[2J\u{1B}]0;owned\u{07}y"
        try Self.request("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: port)

        var printed: String?
        while let line = lines.next() {
            if line.hasPrefix("GET ") {
                printed = line
                break
            }
        }
        let line = try #require(printed, "the request was not printed")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(line.contains(#"/x\u{1B}[2J\u{1B}]0;owned\u{7}y"#))
    }

    private static func request(_ text: String, port: UInt16) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var sink = [UInt8](repeating: 0, count: 4096)
        _ = recv(fd, &sink, sink.count, 0)
    }
}

/// Reads lines from a pipe as they come (blocking), for a child process's standard output.
final class LineReader {
    private let handle: FileHandle
    private var pending = Data()

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line, or `nil` at end of stream.
    func next() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            pending.append(chunk)
        }
    }
}
