import Foundation
import SegmentsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 peer on 127.0.0.1 for exercising `URLSessionSegmentsTransport` without the
/// emulator: one thread accepts connections one at a time, reads one request, and writes the raw
/// bytes the test scripted.
final class LoopbackServer: Sendable {
    /// One received request: the head (request line and headers) and the body.
    struct Received: Sendable {
        let head: String
        let body: Data
    }

    /// What to do with a connection once its request has been read.
    enum Reply: Sendable {
        /// Write these bytes, then close.
        case close(after: Data)
        /// Write these bytes, then keep the connection open until ``stop()``.
        case hang(after: Data)
    }

    struct SocketError: Error {
        let call: String
    }

    let port: UInt16
    private let listener: Int32
    private let state = Locked<(received: [Received], open: [Int32])>(([], []))

    init(reply: @escaping @Sendable (Received) -> Reply) throws {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(call: "socket") }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw SocketError(call: "bind")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in
            acceptLoop(reply)
        }
    }

    /// Every request read so far.
    var received: [Received] { state.value.received }

    /// Stops listening and closes every connection kept open.
    ///
    /// On Linux it only shuts the listener down, which stops listening and fails `accept`; the
    /// accept thread then closes it. Closing it here would free its descriptor number while the
    /// thread may still be about to call `accept` on it, and a listener created meanwhile by
    /// another test could get that number and have its connections stolen by this server.
    /// Elsewhere `shutdown` does not stop a listener, so it is closed here as before.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        #if !os(Linux)
        close(listener)
        #endif
        for fd in state.withLock({ state in defer { state.open.removeAll() }; return state.open }) {
            close(fd)
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String = "/") -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    private func acceptLoop(_ reply: @Sendable (Received) -> Reply) {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                #if os(Linux)
                close(listener)
                #endif
                return
            }
            #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            #endif
            guard let request = read(client) else {
                close(client)
                continue
            }
            state.withLock { $0.received.append(request) }
            switch reply(request) {
            case .close(let bytes):
                write(bytes, to: client)
                close(client)
            case .hang(let bytes):
                write(bytes, to: client)
                state.withLock { $0.open.append(client) }
            }
        }
    }

    private func read(_ fd: Int32) -> Received? {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        let separator = Data("\r\n\r\n".utf8)
        while true {
            if let end = buffer.range(of: separator) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                let wanted = Self.contentLength(in: head)
                var body = Data(buffer[end.upperBound...])
                while body.count < wanted {
                    let count = recv(fd, &chunk, chunk.count, 0)
                    guard count > 0 else { return nil }
                    body.append(contentsOf: chunk[0..<count])
                }
                return Received(head: head, body: body)
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    private func write(_ data: Data, to fd: Int32) {
        #if os(Linux)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        var offset = 0
        let bytes = [UInt8](data)
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, flags) }
            guard written > 0 else { return }
            offset += written
        }
    }

    private static func contentLength(in head: String) -> Int {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                return Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return 0
    }

    /// A response: status line, headers (plus `Connection: close`), `Content-Length` (the body's
    /// size, or `announcedLength`; none when `sendsLength` is `false`) and body.
    static func response(
        _ status: String, headers: [String] = [], body: Data = Data(), announcedLength: Int? = nil,
        sendsLength: Bool = true
    ) -> Data {
        var head = "HTTP/1.1 \(status)\r\n"
        for header in headers + ["Connection: close"] { head += header + "\r\n" }
        if sendsLength { head += "Content-Length: \(announcedLength ?? body.count)\r\n" }
        return Data((head + "\r\n").utf8) + body
    }
}
