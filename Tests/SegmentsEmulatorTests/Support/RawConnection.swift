import Foundation
import SegmentsEmulator
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One response read off a raw socket.
struct RawResponse: Equatable {
    var status: Int
    var headers: [String: String]  // lower-cased names
    var body: [UInt8]

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// What a raw read ended with.
enum RawRead: Equatable {
    /// A complete response.
    case response(RawResponse)
    /// End of stream after these bytes (possibly none), without a complete response.
    case closed(received: [UInt8])
    /// The connection was reset (ECONNRESET) after these bytes.
    case reset(received: [UInt8])
    /// Nothing more arrived within the client's read time-out.
    case timedOut(received: [UInt8])
}

/// A blocking TCP client on 127.0.0.1 for malformed input the URL loading system cannot send.
/// Reads time out after `timeout` seconds so a broken server cannot hang a test.
final class RawConnection {
    let fd: Int32
    private var pending: [UInt8] = []

    init(port: UInt16, timeout: TimeInterval = 3) throws {
        fd = EmulatorPOSIX.makeStreamSocket()
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var value = timeval()
        value.tv_sec = Int(timeout)
        value.tv_usec = numericCast(Int((timeout - Double(Int(timeout))) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = EmulatorPOSIX.connectToLoopback(fd, port: port)
        guard result == 0 else {
            let code = errno
            close()
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    deinit {
        close()
    }

    private var isClosed = false

    func close() {
        guard !isClosed else { return }
        isClosed = true
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// Sends bytes; `false` if the server is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                #if canImport(Glibc)
                Glibc.send(fd, $0.baseAddress, $0.count, flags)
                #else
                Darwin.send(fd, $0.baseAddress, $0.count, flags)
                #endif
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads the next response (Content-Length framed).
    func readResponse() -> RawRead {
        while true {
            if let response = takeResponse() { return .response(response) }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                pending += chunk[0..<count]
            } else if count == 0 {
                return .closed(received: pending)
            } else if errno == ECONNRESET {
                return .reset(received: pending)
            } else if errno == EINTR {
                continue
            } else {
                return .timedOut(received: pending)
            }
        }
    }

    /// Reads until the server closes; what ended the read.
    func readUntilClosed() -> RawRead {
        var collected: [UInt8] = pending
        pending = []
        while true {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                collected += chunk[0..<count]
            } else if count == 0 {
                return .closed(received: collected)
            } else if errno == ECONNRESET {
                return .reset(received: collected)
            } else if errno != EINTR {
                return .timedOut(received: collected)
            }
        }
    }

    private func takeResponse() -> RawResponse? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard pending.count >= 4,
              let end = (0...(pending.count - 4)).first(where: { Array(pending[$0..<($0 + 4)]) == separator })
        else { return nil }
        let head = String(decoding: pending[0..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard pending.count >= end + 4 + length else { return nil }
        let body = Array(pending[(end + 4)..<(end + 4 + length)])
        pending.removeFirst(end + 4 + length)
        return RawResponse(status: status, headers: headers, body: body)
    }
}

/// A minimal request text with `Content-Length` when there is a body.
func rawRequest(_ method: String, _ target: String, body: String? = nil, extraHeaders: [String] = []) -> String {
    var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for header in extraHeaders { text += header + "\r\n" }
    if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
    text += "\r\n"
    return text + (body ?? "")
}

/// The status of the answer to `POST target` with exactly `body` (any bytes, whatever their
/// encoding), on a connection of its own.
func statusOfPost(_ body: [UInt8], to target: String, port: UInt16) throws -> Int? {
    let connection = try RawConnection(port: port, timeout: 10)
    defer { connection.close() }
    let head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(body.count)\r\n\r\n"
    _ = connection.send(Array(head.utf8) + body)
    return connection.response()?.status
}

extension RawConnection {
    /// The next response, recording an issue (with what was read instead) when there is none.
    func response(sourceLocation: SourceLocation = #_sourceLocation) -> RawResponse? {
        let read = readResponse()
        guard case .response(let response) = read else {
            Issue.record("expected a response, got \(read)", sourceLocation: sourceLocation)
            return nil
        }
        return response
    }
}
