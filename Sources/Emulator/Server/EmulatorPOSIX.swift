import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX calls the emulator needs, with the Glibc/Darwin differences in one place: the only
/// file of the module that imports the C library or has a `#if canImport` branch.
package enum EmulatorPOSIX {
    #if canImport(Glibc)
    // Close-on-exec from the start: a child process (e.g. `segments demo` spawning a shell) must
    // not inherit the listener or a connection.
    private static let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #endif

    /// A blocking TCP socket that closes on exec, or -1 (as `socket`).
    package static func makeStreamSocket() -> Int32 {
        socket(AF_INET, streamType, 0)
    }

    /// 127.0.0.1:`port` as a socket address.
    package static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    /// Connects `fd` to 127.0.0.1:`port`: `connect`'s result (0, or -1 with `errno` set).
    package static func connectToLoopback(_ fd: Int32, port: UInt16) -> Int32 {
        var address = loopbackAddress(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// A listening TCP socket on 127.0.0.1 (non-blocking, so `accept` never blocks after `poll`).
    static func makeListener(port: UInt16, backlog: Int32 = 128) throws -> (fd: Int32, port: UInt16) {
        let fd = makeStreamSocket()
        guard fd >= 0 else { throw EmulatorError(operation: "socket", code: errno) }
        setCloseOnExec(fd)
        var reuse: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { return try fail("bind", closing: fd) }
        guard listen(fd, backlog) == 0 else { return try fail("listen", closing: fd) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return try fail("getsockname", closing: fd) }
        setNonBlocking(fd, true)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private static func fail(_ operation: String, closing fd: Int32) throws -> (fd: Int32, port: UInt16) {
        let code = errno
        close(fd)
        throw EmulatorError(operation: operation, code: code)
    }

    /// A pipe whose read end wakes the accept loop on stop; both ends close on exec.
    static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        // `pipe2` and `accept4` are not in the Glibc module (they need _GNU_SOURCE), so the flag
        // is set right after creation; the emulator itself never forks in between.
        guard pipe(&fds) == 0 else { throw EmulatorError(operation: "pipe", code: errno) }
        setCloseOnExec(fds[0])
        setCloseOnExec(fds[1])
        return (fds[0], fds[1])
    }

    /// Sets `FD_CLOEXEC` when it is not set yet.
    static func setCloseOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 && flags & FD_CLOEXEC == 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// Whether `fd` is closed on exec.
    static func closesOnExec(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFD)
        return flags >= 0 && flags & FD_CLOEXEC != 0
    }

    /// Blocks until one of `fds` is readable (or hung up), or `timeout` seconds passed (`nil`:
    /// no limit); returns which ones are.
    static func waitReadable(_ fds: [Int32], timeout: TimeInterval? = nil) -> [Bool] {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let milliseconds = timeout.map { Int32(min(max($0, 0), 60) * 1000) } ?? -1
        while poll(&polled, nfds_t(polled.count), milliseconds) < 0 {
            if errno != EINTR { break }
        }
        return polled.map { $0.revents != 0 }
    }

    /// What `accept` gave.
    enum Accepted {
        /// A new connection (close-on-exec).
        case connection(Int32)
        /// No connection is pending.
        case none
        /// `accept` failed with this `errno`, e.g. `EMFILE` at the descriptor limit: the pending
        /// connection stays queued, so retrying at once would spin.
        case failed(Int32)
    }

    /// The next pending connection.
    static func accept(_ fd: Int32) -> Accepted {
        while true {
            #if canImport(Glibc)
            let client = Glibc.accept(fd, nil, nil)
            #else
            let client = Darwin.accept(fd, nil, nil)
            #endif
            if client >= 0 {
                setCloseOnExec(client)
                return .connection(client)
            }
            let code = errno
            if code == EINTR || code == ECONNABORTED { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .none }
            return .failed(code)
        }
    }

    /// Sets the receive time-out alone (the time left of a request's deadline).
    static func setReceiveTimeout(_ fd: Int32, _ seconds: TimeInterval) {
        setTimeout(fd, SO_RCVTIMEO, seconds)
    }

    /// Sets the send time-out alone (the time left to write an answer).
    static func setSendTimeout(_ fd: Int32, _ seconds: TimeInterval) {
        setTimeout(fd, SO_SNDTIMEO, seconds)
    }

    /// Between 1 ms and a day, so that any configured figure (even an infinite one) converts.
    private static func setTimeout(_ fd: Int32, _ option: Int32, _ seconds: TimeInterval) {
        var value = timeval()
        let clamped = seconds.isNaN ? 0.001 : min(max(0.001, seconds), 86_400)
        value.tv_sec = Int(clamped)
        value.tv_usec = numericCast(Int((clamped - Double(Int(clamped))) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Blocking mode, read/send time-outs and, on Darwin, no SIGPIPE for an accepted socket.
    static func configureConnection(_ fd: Int32, timeout: TimeInterval) {
        setNonBlocking(fd, false)  // BSD sockets inherit O_NONBLOCK from the listener.
        setReceiveTimeout(fd, timeout)
        setSendTimeout(fd, timeout)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Reads into `buffer`; returns the byte count, 0 at end of stream, -1 on error or time-out.
    static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return count }
            if errno != EINTR { return -1 }
        }
    }

    /// Writes all bytes by `deadline`, however slowly the peer reads (each `send` waits at most
    /// what is left); `false` when the peer is gone or the time ran out.
    static func send(_ fd: Int32, _ bytes: ArraySlice<UInt8>, deadline: Date) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            setSendTimeout(fd, left)
            let sent = bytes[offset...].withUnsafeBytes {
                #if canImport(Glibc)
                Glibc.send(fd, $0.baseAddress, $0.count, sendFlags)
                #else
                Darwin.send(fd, $0.baseAddress, $0.count, sendFlags)
                #endif
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Makes the next `close` send RST instead of FIN.
    static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// The system's description of an `errno` value, e.g. `Address already in use`.
    static func message(forError code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Whether the call that just failed on this thread (`receive` returning -1) ran out of its
    /// time-out (`SO_RCVTIMEO`) rather than failing otherwise.
    static var lastCallTimedOut: Bool {
        errno == EAGAIN || errno == EWOULDBLOCK
    }

    /// Wakes any thread blocked reading or writing `fd` (it sees end of stream or an error).
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Stops writing (sends FIN) while still reading what the peer sends.
    static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes a descriptor.
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// Writes one byte to a pipe (to wake a `poll`).
    static func poke(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    private static func setNonBlocking(_ fd: Int32, _ on: Bool) {
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0 else { return }
        _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    // MARK: Addresses

    /// The 4 bytes of a dotted-quad IPv4 address, parsed by `inet_pton` (strict form only), or `nil`.
    static func ipv4Address(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// The 16 bytes of an IPv6 address (without brackets), parsed by `inet_pton`, or `nil`.
    static func ipv6Address(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}
