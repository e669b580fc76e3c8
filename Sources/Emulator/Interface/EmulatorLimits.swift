import Foundation

/// Resource limits of the emulator's HTTP server.
public struct EmulatorLimits: Hashable, Sendable {
    /// The largest request line plus headers, in bytes; larger heads get 431.
    public var maxHeaderBytes: Int
    /// The largest request body, in bytes; larger bodies get 413.
    public var maxBodyBytes: Int
    /// Seconds a connection may stay silent (idle keep-alive or mid-request) before it is closed;
    /// also the send time-out towards a client that stops reading.
    public var readTimeout: TimeInterval
    /// Open connections at most; further ones get 503 and are closed.
    public var maxConnections: Int
    /// Requests kept in the request log; older ones are dropped first.
    public var maxLoggedRequests: Int
    /// Events, customer updates, links and customers kept, each; the oldest are dropped first, so a
    /// client that never stops sending cannot make the emulator grow without bound.
    public var maxStoredRecords: Int
    /// Seconds one request may take to arrive, from its first byte to its last; a client that
    /// trickles bytes slower than that loses the connection (408) instead of holding it forever.
    public var requestDeadline: TimeInterval
    /// The stack size, in bytes, of the accept thread and of every connection thread, set
    /// explicitly so the emulator behaves alike everywhere: a thread's default is 512 KiB on Apple
    /// platforms and 8 MiB on Linux. JSON bodies are depth-checked (``EmulatorJSON/maximumDepth``)
    /// before the recursive decoder runs, and the deepest accepted body fits 512 KiB, so a deeper
    /// one is answered with 400, never a stack overflow. 1 MiB by default (twice Apple's default
    /// for secondary threads); set it after `init`.
    public var threadStackSize = 1024 * 1024
    /// Seconds one connection may be used from its accept, whatever the client does: reading
    /// requests (however slowly their bytes trickle in), keeping alive between them, and draining
    /// what it still sends after a bad request. Every answer after the deadline says
    /// `Connection: close`; a request may still arrive whole within one more ``readTimeout`` (so
    /// a client that sent it as the deadline passed gets its answer), a request still arriving
    /// then gets 408, and draining after a bad request lasts one read time-out at most, ending
    /// then too. Writing an answer takes at most one ``readTimeout``, so no connection outlives
    /// `connectionDeadline` plus two read time-outs, plus delays injected with an
    /// ``EmulatorFault``. 60 s by default; set it after `init`.
    public var connectionDeadline: TimeInterval = 60
    /// Bytes kept for events, customer updates, links and customers (their ids and properties),
    /// counted as an estimate of the memory they take (strings, numbers and a fixed overhead per
    /// record). A tracking or link-ids request that would go over it is answered 507 (Insufficient
    /// Storage) with a JSON error and stores nothing; ``SegmentsEmulator/reset()`` empties the
    /// store. 256 MiB by default; set it after `init`.
    public var maxStoredBytes = 256 * 1024 * 1024
    /// Bytes kept in the request log (bodies, headers, path and query of each logged request);
    /// the oldest requests are dropped first, like ``maxLoggedRequests``, but the newest is always
    /// kept. 64 MiB by default; set it after `init`.
    public var maxLoggedBytes = 64 * 1024 * 1024
    /// Bytes of properties one customer may hold (keys and values, counted like
    /// ``maxStoredBytes``). A customer update that would make a customer's merged properties
    /// larger is answered 413 with a JSON error and stores nothing. 1 MiB by default (what one
    /// request body may carry); set it after `init`.
    public var maxCustomerPropertyBytes = 1024 * 1024

    /// Limits with defaults: 16 KiB of headers, 1 MiB of body, 5 s read time-out,
    /// 256 connections, 10 000 logged requests, 100 000 stored records of each kind, 30 s per request.
    /// The other limits (``threadStackSize``, ``connectionDeadline``, ``maxStoredBytes``,
    /// ``maxLoggedBytes``, ``maxCustomerPropertyBytes``) start at their documented defaults and are
    /// set after `init`.
    public init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024, readTimeout: TimeInterval = 5,
                maxConnections: Int = 256, maxLoggedRequests: Int = 10_000, maxStoredRecords: Int = 100_000,
                requestDeadline: TimeInterval = 30) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.readTimeout = readTimeout
        self.maxConnections = maxConnections
        self.maxLoggedRequests = maxLoggedRequests
        self.maxStoredRecords = maxStoredRecords
        self.requestDeadline = requestDeadline
    }
}
