import Foundation

/// A small HTTP/1.1 server on 127.0.0.1: one accept thread, one thread per connection.
///
/// Each connection reads with a time-out (`SO_RCVTIMEO`), parses with ``HTTPRequestParser``
/// (pipelining and keep-alive included) and writes what `respond` returns. Three clocks bound a
/// connection: the read time-out (silence), the request deadline (one request's bytes) and the
/// connection deadline (everything from accept to close, draining after a bad request included),
/// so a client trickling bytes cannot hold one of the `maxConnections` slots for long. `stop()` wakes the accept
/// loop through a pipe, shuts every open connection down (which wakes their blocked `recv`/`send`),
/// cuts fault delays short and waits for every thread to finish.
///
/// `@unchecked Sendable` is sound: the mutable fields (`stopped`, `connections`, `closed`) are only
/// touched with `condition` locked; everything else is immutable after `init`. Descriptors are only
/// closed or signalled under that lock and never after `closed`, so a number reused by another
/// socket in the process is never touched.
final class EmulatorSocketServer: @unchecked Sendable {
    /// The bound port.
    let port: UInt16

    private let limits: EmulatorLimits
    private let respond: @Sendable (ParsedHTTPRequest) -> EmulatorHTTPResponse
    private let accept: @Sendable (Int32) -> EmulatorPOSIX.Accepted
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let threads = DispatchGroup()
    private let condition = NSCondition()
    private var stopped = false
    private var closed = false
    private var connections: Set<Int32> = []

    /// Binds 127.0.0.1:`port` (0 = ephemeral) and starts accepting. `accept` is the system call
    /// unless a test simulates its failures.
    init(port: UInt16, limits: EmulatorLimits,
         accept: @escaping @Sendable (Int32) -> EmulatorPOSIX.Accepted = { EmulatorPOSIX.accept($0) },
         respond: @escaping @Sendable (ParsedHTTPRequest) -> EmulatorHTTPResponse) throws {
        let bound = try EmulatorPOSIX.makeListener(port: port)
        do {
            wake = try EmulatorPOSIX.makePipe()
        } catch {
            EmulatorPOSIX.close(bound.fd)
            throw error
        }
        listener = bound.fd
        self.port = bound.port
        self.limits = limits
        self.accept = accept
        self.respond = respond
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop()
            threads.leave()
        }
        thread.name = "SegmentsEmulator.accept"
        thread.stackSize = limits.threadStackSize
        thread.start()
    }

    deinit {
        stop()
    }

    /// Closes the listener and every connection and waits for all threads. Idempotent.
    func stop() {
        condition.lock()
        guard !closed else {
            // Already stopped: the descriptor numbers may belong to someone else by now.
            condition.unlock()
            return
        }
        stopped = true
        for fd in connections { EmulatorPOSIX.shutdownBoth(fd) }
        condition.broadcast()
        EmulatorPOSIX.poke(wake.write)  // under the lock: the pipe is open while `closed` is false
        condition.unlock()
        threads.wait()
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        closed = true
        EmulatorPOSIX.close(listener)
        EmulatorPOSIX.close(wake.read)
        EmulatorPOSIX.close(wake.write)
    }

    private var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    // MARK: Accepting

    /// The longest pause after a failed `accept`.
    static let maximumAcceptBackoff: TimeInterval = 1

    private func acceptLoop() {
        var backoff: TimeInterval = 0
        while true {
            if backoff > 0 {
                // `accept` failed (e.g. EMFILE at the descriptor limit) and the connection is still
                // queued, so the listener stays readable: wait on the stop pipe alone for a while
                // instead of spinning.
                if EmulatorPOSIX.waitReadable([wake.read], timeout: backoff)[0] || isStopped { return }
            }
            let ready = EmulatorPOSIX.waitReadable([listener, wake.read])
            if ready[1] || isStopped { return }
            acceptPending: while true {
                switch accept(listener) {
                case .connection(let client):
                    backoff = 0
                    admit(client)
                case .none:
                    break acceptPending
                case .failed:
                    backoff = min(max(backoff * 2, 0.01), Self.maximumAcceptBackoff)
                    acceptFailures.withLock { $0 += 1 }
                    break acceptPending
                }
            }
        }
    }

    /// How many times `accept` failed (for tests of the back-off).
    let acceptFailures = EmulatorLocked(0)

    /// How many client connections are open now.
    var openConnectionCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return connections.count
    }

    /// Every descriptor the server holds now: the listener, the wake pipe and open connections.
    var descriptors: [Int32] {
        condition.lock()
        defer { condition.unlock() }
        return closed ? [] : [listener, wake.read, wake.write] + connections.sorted()
    }

    private func admit(_ fd: Int32) {
        condition.lock()
        let stopping = stopped
        let full = connections.count >= limits.maxConnections
        if !stopping && !full {
            connections.insert(fd)
            threads.enter()
        }
        condition.unlock()
        guard !stopping else {
            EmulatorPOSIX.close(fd)  // accepted while stopping: closed like every other connection
            return
        }
        guard !full else {
            EmulatorPOSIX.configureConnection(fd, timeout: 0.1)
            _ = EmulatorPOSIX.send(fd, EmulatorHTTPResponse.error(503, "too many connections").wire(keepAlive: false)[...],
                                   deadline: Date(timeIntervalSinceNow: 0.1))
            EmulatorPOSIX.close(fd)
            return
        }
        let thread = Thread { [self] in
            serve(fd)
            condition.lock()
            connections.remove(fd)
            EmulatorPOSIX.close(fd)  // under the lock, so stop() never shuts down a reused number
            condition.unlock()
            threads.leave()
        }
        thread.name = "SegmentsEmulator.connection"
        thread.stackSize = limits.threadStackSize
        thread.start()
    }

    // MARK: One connection

    private func serve(_ fd: Int32) {
        // After `connectionEnds` every answer says `Connection: close`; a request may still arrive
        // until `readingEnds` (one read time-out later), so that a client which sent it just as the
        // deadline passed gets an answer instead of a dropped connection; then the connection
        // ends, with 408 for a request still arriving. Writing the last answer takes at most one
        // more read time-out; injected delays come on top.
        let connectionEnds = Date(timeIntervalSinceNow: limits.connectionDeadline)
        let readingEnds = connectionEnds.addingTimeInterval(limits.readTimeout)
        EmulatorPOSIX.configureConnection(fd, timeout: limits.readTimeout)
        var parser = HTTPRequestParser(maxHeaderBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        // When the first byte of the request being read arrived: the whole request must follow
        // within `requestDeadline`, however slowly a client trickles it (one byte per read
        // time-out would otherwise hold the connection forever).
        var requestStarted: Date?
        while true {
            switch parser.next() {
            case .request(let request):
                requestStarted = parser.bufferedByteCount > 0 ? Date() : nil
                let response = respond(request)
                if response.delay > 0 && !pause(response.delay) { return }
                let keepAlive = request.keepsAlive && response.allowsKeepAlive && !isStopped && Date() < connectionEnds
                guard write(response, to: fd, keepAlive: keepAlive), keepAlive else { return }
            case .failure(let failure):
                _ = write(.error(failure.status, "\(failure)"), to: fd, keepAlive: false)
                drainAndClose(fd, until: readingEnds)
                return
            case .needMoreData:
                if parser.takeContinueRequest() {
                    _ = EmulatorPOSIX.send(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)[...],
                                           deadline: Date(timeIntervalSinceNow: limits.readTimeout))
                }
                let connectionLeft = readingEnds.timeIntervalSinceNow
                guard connectionLeft > 0 else {
                    if parser.bufferedByteCount > 0 {
                        _ = write(.error(408, "connection took too long"), to: fd, keepAlive: false)
                    }
                    return
                }
                var waitLimit = min(limits.readTimeout, connectionLeft)
                if let requestStarted {
                    let left = limits.requestDeadline - Date().timeIntervalSince(requestStarted)
                    guard left > 0 else {
                        _ = write(.error(408, "request took too long"), to: fd, keepAlive: false)
                        return
                    }
                    waitLimit = min(waitLimit, left)
                }
                EmulatorPOSIX.setReceiveTimeout(fd, waitLimit)
                let count = EmulatorPOSIX.receive(fd, into: &chunk)
                if count > 0 {
                    if requestStarted == nil { requestStarted = Date() }
                    parser.append(chunk[0..<count])
                } else {
                    let timedOut = count < 0 && EmulatorPOSIX.lastCallTimedOut
                    if timedOut && parser.bufferedByteCount > 0 && !isStopped {
                        // A client that went silent mid-request hears why it is being dropped.
                        _ = write(.error(408, "request timed out"), to: fd, keepAlive: false)
                    }
                    return
                }
            }
        }
    }

    /// Writes the response as its delivery says, within one read time-out however slowly the
    /// client reads; `false` when the connection must close now.
    private func write(_ response: EmulatorHTTPResponse, to fd: Int32, keepAlive: Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: limits.readTimeout)
        switch response.delivery {
        case .complete:
            return EmulatorPOSIX.send(fd, (response.head(keepAlive: keepAlive) + response.body)[...], deadline: deadline)
        case .closeWithoutResponse:
            return false
        case .truncated(let bytes):
            _ = EmulatorPOSIX.send(fd, (response.head(keepAlive: false) + response.body.prefix(bytes))[...],
                                   deadline: deadline)
            return false
        case .reset(let bytes):
            _ = EmulatorPOSIX.send(fd, (response.head(keepAlive: false) + response.body.prefix(bytes))[...],
                                   deadline: deadline)
            EmulatorPOSIX.resetOnClose(fd)
            return false
        }
    }

    /// After an error answer the client may still be sending (e.g. a body over the limit): closing
    /// with unread data would send RST and could destroy the answer in flight, so stop writing,
    /// read what is left for a short while, then close. "A short while" is bounded three ways:
    /// half a second of silence, a byte count, and a total of one read time-out, never past the
    /// time the connection stops reading (`readingEnds`), so a client dripping a byte at a time
    /// cannot keep it going.
    private func drainAndClose(_ fd: Int32, until readingEnds: Date) {
        EmulatorPOSIX.shutdownWrite(fd)
        EmulatorPOSIX.configureConnection(fd, timeout: min(limits.readTimeout, 0.5))
        let drainEnds = min(readingEnds, Date(timeIntervalSinceNow: limits.readTimeout))
        var sink = [UInt8](repeating: 0, count: 64 * 1024)
        var drained = 0
        while drained < 4 * limits.maxBodyBytes + limits.maxHeaderBytes {
            let left = drainEnds.timeIntervalSinceNow
            if left <= 0 { return }
            EmulatorPOSIX.setReceiveTimeout(fd, min(limits.readTimeout, 0.5, left))
            let count = EmulatorPOSIX.receive(fd, into: &sink)
            if count <= 0 { return }
            drained += count
        }
    }

    /// Sleeps up to `seconds`; `false` when `stop()` cut it short.
    private func pause(_ seconds: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !stopped && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        return !stopped
    }
}
