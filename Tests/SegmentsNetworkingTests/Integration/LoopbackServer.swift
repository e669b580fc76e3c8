import Foundation
import SegmentsDomain
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 peer on 127.0.0.1 for exercising `URLSessionSegmentsTransport` without the
/// emulator: one thread accepts connections one at a time, reads one request, and writes the raw
/// bytes the test scripted.
///
/// Only the accept thread closes the listener and the connection it is serving, as the emulator's
/// server does: ``stop()`` wakes its `poll` through a pipe and waits for it to finish. Closing the
/// listener from the stopping thread would free its descriptor number while the accept thread may
/// still be about to call `accept` on it, and a listener created meanwhile by another test could
/// get that number and have its connections stolen by this server.
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
        /// Write these bytes (a response made with `keepsAlive: true`), then read the connection's
        /// next request, until the client closes it.
        case keepAlive(after: Data)
    }

    struct SocketError: Error {
        let call: String
    }

    private struct State: Sendable {
        var received: [Received] = []
        /// Connections kept open by `.hang`, closed by ``stop()``.
        var open: [Int32] = []
        /// The connection the accept thread is serving; ``stop()`` only shuts it down.
        var serving: Int32?
        var stopped = false
        /// Connections accepted so far.
        var connections = 0
    }

    let port: UInt16
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)
    private let state = Locked(State())

    init(reply: @escaping @Sendable (Received) -> Reply) throws {
        let (fd, port) = try Self.loopbackSocket(listening: true)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            close(fd)
            throw SocketError(call: "pipe")
        }
        pipeEnds.forEach(Self.closeOnExec)
        // Non-blocking, so `accept` after `poll` never blocks if the connection went away meanwhile.
        Self.setNonBlocking(fd, true)
        listener = fd
        wake = (pipeEnds[0], pipeEnds[1])
        self.port = port
        Thread.detachNewThread { [self] in
            acceptLoop(reply)
        }
    }

    /// Every request read so far.
    var received: [Received] { state.value.received }

    /// How many connections were accepted so far.
    var connections: Int { state.value.connections }

    /// Stops listening and closes every connection kept open; waits (bounded) for the accept
    /// thread, which closes the listener. Idempotent.
    func stop() {
        let kept: [Int32]? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.stopped = true
            // Under the lock: the accept thread clears `serving` under it before closing it.
            if let serving = state.serving { shutdown(serving, Int32(SHUT_RDWR)) }
            Self.poke(wake.write)
            defer { state.open.removeAll() }
            return state.open
        }
        guard let kept else { return }
        for fd in kept { close(fd) }
        if finished.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("the loopback server's accept thread did not finish within 30 s")
        }
        close(wake.write)  // after the wait: a stuck accept thread must not poll a reused number
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String = "/") -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    private func acceptLoop(_ reply: @Sendable (Received) -> Reply) {
        defer {
            close(listener)
            close(wake.read)
            finished.signal()
        }
        while true {
            var polled = [listener, wake.read].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 else {
                if errno == EINTR { continue }
                return
            }
            if polled[1].revents != 0 { return }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }  // the connection went away before `accept`
            Self.closeOnExec(client)
            // Darwin's accepted sockets inherit the listener's O_NONBLOCK; Linux's do not.
            Self.setNonBlocking(client, false)
            guard state.withLock({ state in
                if !state.stopped {
                    state.serving = client
                    state.connections += 1
                }
                return !state.stopped
            }) else {
                close(client)
                return
            }
            #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            #endif
            var keepsOpen = false
            var next = read(client)
            while let request = next {
                state.withLock { $0.received.append(request) }
                next = nil
                switch reply(request) {
                case .close(let bytes):
                    write(bytes, to: client)
                case .hang(let bytes):
                    write(bytes, to: client)
                    keepsOpen = true
                case .keepAlive(let bytes):
                    write(bytes, to: client)
                    next = read(client)  // ``stop()`` shuts the connection down to end this wait
                }
            }
            let closesNow = state.withLock { state in
                state.serving = nil
                if keepsOpen && !state.stopped { state.open.append(client) }
                return !(keepsOpen && !state.stopped)
            }
            if closesNow { close(client) }
        }
    }

    private static func poke(_ fd: Int32) {
        var byte: UInt8 = 1
        #if canImport(Glibc)
        _ = Glibc.write(fd, &byte, 1)
        #else
        _ = Darwin.write(fd, &byte, 1)
        #endif
    }

    /// Marks `fd` close-on-exec: a child process another test starts must not keep this server's
    /// sockets (a listener held by a child still takes connections after ``stop()``).
    private static func closeOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD, 0)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// A loopback port on which nothing listens, reserved (bound, not listening) until `body`
    /// returns, so no other test's server can take it meanwhile: a connection to it is refused.
    static func withRefusingPort<Result>(_ body: (UInt16) async throws -> Result) async throws -> Result {
        let (fd, port) = try loopbackSocket(listening: false)
        defer { close(fd) }
        return try await body(port)
    }

    /// A close-on-exec TCP socket bound to 127.0.0.1 on a port the system picks, listening or not,
    /// and that port.
    private static func loopbackSocket(listening: Bool) throws -> (fd: Int32, port: UInt16) {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(call: "socket") }
        closeOnExec(fd)
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && (!listening || listen(fd, 16) == 0)
                    && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw SocketError(call: "bind")
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private static func setNonBlocking(_ fd: Int32, _ on: Bool) {
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0 else { return }
        _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
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

    /// A response: status line, headers (plus `Connection: close` unless `keepsAlive`),
    /// `Content-Length` (the body's size, or `announcedLength`; none when `sendsLength` is `false`)
    /// and body.
    static func response(
        _ status: String, headers: [String] = [], body: Data = Data(), announcedLength: Int? = nil,
        sendsLength: Bool = true, keepsAlive: Bool = false
    ) -> Data {
        var head = "HTTP/1.1 \(status)\r\n"
        for header in headers + (keepsAlive ? [] : ["Connection: close"]) { head += header + "\r\n" }
        if sendsLength { head += "Content-Length: \(announcedLength ?? body.count)\r\n" }
        return Data((head + "\r\n").utf8) + body
    }
}
