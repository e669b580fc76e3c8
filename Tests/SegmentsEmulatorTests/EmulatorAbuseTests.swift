import Foundation
@testable import SegmentsEmulator
import SegmentsTesting
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 23 item 10: a slow client cannot hold a connection past `connectionDeadline` (not even
/// while the server drains after a bad request), what the emulator keeps is bounded in bytes, not
/// only in records, and a web page in a browser cannot make it record anything.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct EmulatorAbuseTests {
    private static let eventsPath = "/track/v2/projects/t/customers/events"

    private static func limits(_ change: (inout EmulatorLimits) -> Void) -> EmulatorLimits {
        var limits = EmulatorLimits()
        change(&limits)
        return limits
    }

    // MARK: The whole-connection deadline

    @Test func aClientDrippingBytesAfterABadRequestIsCutAtTheConnectionDeadline() throws {
        // Each byte comes well within the drain's 0.5 s read time-out, so only a deadline on the
        // drain ends it (before: up to 4 MiB of drain, one byte per 0.45 s = weeks).
        let emulator = SegmentsEmulator(limits: Self.limits {
            $0.readTimeout = 5
            $0.connectionDeadline = 1
        })
        try emulator.start()
        defer { emulator.stop() }
        let slow = try RawConnection(port: emulator.port!, timeout: 30)
        defer { slow.close() }
        slow.send("NOT HTTP\r\n\r\n")
        guard let refused = slow.response() else { return }
        #expect(refused.status == 400)

        // The server stops writing (FIN) at once, so the client sees the end of the stream
        // straight away; what shows the server still holds the connection is that the client's
        // sends keep succeeding. Once the server closes, the next sends fail (RST, then EPIPE).
        #expect(slow.readUntilClosed() == .closed(received: []))
        let planned = 100  // 20 s of dripping: far past the 1 s deadline
        let drip = Drip(slow.fd, every: 200_000, limit: planned)
        defer { drip.finish() }  // before `slow` closes (defers run last first)
        #expect(drip.ended(within: Hang.scaled(60)), "the drip ended by itself: the server closed")
        #expect(drip.sent < planned, "the server closed while the client was still dripping")
        #expect(drip.sent >= 1, "the drip had started")
    }

    @Test func aTrickledRequestIsCutAtTheConnectionDeadlineBeforeTheRequestDeadline() throws {
        // Cut one read time-out after the connection deadline (2 s + 1 s), not at 600 s.
        let emulator = SegmentsEmulator(limits: EmulatorLimits(readTimeout: 2, requestDeadline: 600).with {
            $0.connectionDeadline = 1
        })
        try emulator.start()
        defer { emulator.stop() }
        let slow = try RawConnection(port: emulator.port!, timeout: 30)
        defer { slow.close() }
        let planned = 100
        slow.send("GET /webxp/projects/t/segments?cookie=c HTTP/1.1\r\nX-Slow: ")
        let drip = Drip(slow.fd, every: 200_000, limit: planned)
        defer { drip.finish() }  // before `slow` closes (defers run last first)
        let read = slow.readResponse()
        let sentWhenAnswered = drip.sent

        guard case .response(let response) = read else {
            Issue.record("expected 408, got \(read)")
            return
        }
        #expect(response.status == 408)
        #expect(response.headers["connection"] == "close")
        #expect(sentWhenAnswered < planned, "cut while the client was still sending")
        #expect(emulator.requests.isEmpty, "the request never completed")
    }

    @Test func keepAliveRequestsEndWithConnectionCloseOnceTheConnectionDeadlinePassed() throws {
        // Every request arrives quickly and whole, so neither the read time-out nor the request
        // deadline ever fires: only the connection's own deadline closes it.
        let emulator = SegmentsEmulator(limits: Self.limits {
            $0.readTimeout = 5
            $0.connectionDeadline = 1
        })
        try emulator.start()
        defer { emulator.stop() }
        let raw = try RawConnection(port: emulator.port!, timeout: 30)
        defer { raw.close() }
        let planned = 40  // 40 × 0.1 s = 4 s of requests: far past the 1 s deadline
        var statuses: [Int] = []
        var connectionHeaders: [String] = []
        for _ in 0..<planned {
            guard raw.send(rawRequest("GET", "/webxp/projects/t/segments?cookie=c")),
                  case .response(let response) = raw.readResponse() else { break }
            statuses.append(response.status)
            connectionHeaders.append(response.headers["connection"] ?? "")
            if response.headers["connection"] == "close" { break }
            usleep(100_000)
        }

        #expect(statuses.count < planned, "the connection ended before the client stopped")
        #expect(statuses.allSatisfy { $0 == 200 }, "every request that came in whole was answered: \(statuses)")
        #expect(connectionHeaders.last == "close", "the last answer said the connection closes")
        #expect(connectionHeaders.dropLast().allSatisfy { $0 == "keep-alive" })
        #expect(raw.readUntilClosed() == .closed(received: []))
        #expect(emulator.requests.count == statuses.count)
    }

    @Test func writingToAClientThatDoesNotReadStopsAtTheWriteDeadline() throws {
        // Before, each `send` call had its own time-out and a peer that read a little at a time
        // restarted it; now the whole write has one deadline. Staged on a socket pair whose
        // reader never reads, with the socket's own send time-out at an hour, past the suite's
        // time limit: only the deadline (0.3 s) can end the write before the limit fails the test.
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        let kind = Int32(SOCK_STREAM.rawValue)
        #else
        let kind = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else {
            Issue.record("socketpair failed: \(errno)")
            return
        }
        defer {
            EmulatorPOSIX.close(fds[0])
            EmulatorPOSIX.close(fds[1])
        }
        EmulatorPOSIX.configureConnection(fds[0], timeout: 3600)
        let bytes = [UInt8](repeating: 0x61, count: 64 * 1024 * 1024)  // far more than any socket buffer
        let written = EmulatorPOSIX.send(fds[0], bytes[...], deadline: Date(timeIntervalSinceNow: 0.3))

        #expect(!written, "the write was abandoned")
    }

    // MARK: Byte budgets

    @Test func trackingBeyondTheStoredByteBudgetGets507AndStoresNothing() throws {
        let emulator = SegmentsEmulator(limits: Self.limits { $0.maxStoredBytes = 50_000 })
        try emulator.start()
        defer { emulator.stop() }
        let raw = try RawConnection(port: emulator.port!)
        defer { raw.close() }
        let bulky = #"{"blob": "\#(String(repeating: "x", count: 4_000))"}"#
        var statuses: [Int] = []
        for index in 0..<40 {  // 40 × 4 KB = 160 KB, over three times the budget
            raw.send(rawRequest("POST", Self.eventsPath, body: Body.event("e\(index)", ids: ["cookie": "c"], properties: bulky)))
            guard let response = raw.response() else { return }
            statuses.append(response.status)
            if response.status == 507 {
                #expect(response.json?["error"] != nil, "a JSON error says why")
            }
        }
        let accepted = statuses.prefix { $0 == 200 }.count

        #expect(accepted >= 5, "the budget holds several events: \(statuses)")
        #expect(accepted < 40)
        #expect(statuses.dropFirst(accepted).allSatisfy { $0 == 507 }, "once full, every event is refused: \(statuses)")
        #expect(emulator.events.map(\.eventType) == (0..<accepted).map { "e\($0)" }, "refused events are not stored")
        #expect(emulator.state.withLock { $0.storedBytes } <= 50_000)

        emulator.reset()
        raw.send(rawRequest("POST", Self.eventsPath, body: Body.event("after", ids: ["cookie": "c"], properties: bulky)))
        #expect(raw.response()?.status == 200, "reset empties the store")
        #expect(emulator.events.map(\.eventType) == ["after"])
    }

    @Test func theStoredByteCountFollowsTrimmingByRecordCount() {
        // Records dropped by the record limit give their bytes back, so the budget is never used up
        // by records that are gone.
        var limits = EmulatorLimits(maxLoggedRequests: 10, maxStoredRecords: 50)
        limits.maxStoredBytes = 1_000_000
        var state = EmulatorState(limits: limits)
        var refused = 0
        for index in 0..<5_000 {
            let event = EmulatorEvent(integration: .project(token: "t"), eventType: "e", customerIds: ["cookie": "c\(index % 7)"],
                                      properties: ["n": .number(Double(index))])
            if state.record(event) != .stored { refused += 1 }
        }
        #expect(refused == 0, "5,000 small events fit when only the newest ≤ 100 are kept")
        #expect(state.events.count < 100)
        let expected = state.events.reduce(0) { $0 + EmulatorByteCost.of($1) }
            + state.customers.values.reduce(0) { $0 + EmulatorByteCost.of($1) }
        #expect(state.storedBytes == expected, "the running count equals what is kept")
    }

    @Test func theRequestLogIsBoundedInBytesNewestFirst() throws {
        let emulator = SegmentsEmulator(limits: Self.limits { $0.maxLoggedBytes = 100_000 })
        try emulator.start()
        defer { emulator.stop() }
        let raw = try RawConnection(port: emulator.port!)
        defer { raw.close() }
        let body = String(repeating: "y", count: 10_000)
        for index in 0..<50 {  // 500 KB of bodies on an unrouted path (404, but logged)
            raw.send(rawRequest("POST", "/nope/\(index)", body: body))
            guard raw.response()?.status == 404 else { return }
        }
        let logged = emulator.requests

        #expect(logged.reduce(0) { $0 + $1.body.count } <= 100_000)
        #expect(logged.count >= 5, "the log still holds recent requests")
        #expect(logged.map(\.path) == (50 - logged.count..<50).map { "/nope/\($0)" }, "the newest, in order")
    }

    @Test func aCustomersPropertiesAreBoundedPerCustomerWith413() throws {
        let emulator = SegmentsEmulator(limits: Self.limits { $0.maxCustomerPropertyBytes = 10_000 })
        try emulator.start()
        defer { emulator.stop() }
        let raw = try RawConnection(port: emulator.port!)
        defer { raw.close() }
        let value = String(repeating: "v", count: 1_000)
        var statuses: [Int] = []
        for index in 0..<30 {  // 30 new keys of 1 KB each: three times the bound
            raw.send(rawRequest("POST", "/track/v2/projects/t/customers",
                                body: Body.customer(ids: ["cookie": "big"], properties: #"{"k\#(index)": "\#(value)"}"#)))
            guard let response = raw.response() else { return }
            statuses.append(response.status)
            if response.status == 413 {
                #expect(response.json?["error"] != nil, "a JSON error says why")
            }
        }
        let accepted = statuses.prefix { $0 == 200 }.count

        #expect(accepted >= 5 && accepted < 30, "\(statuses)")
        #expect(statuses.dropFirst(accepted).allSatisfy { $0 == 413 }, "\(statuses)")
        #expect(emulator.customer(cookie: "big")?.properties.count == accepted, "refused updates merged nothing")
        #expect(emulator.customerUpdates.count == accepted, "refused updates are not recorded")
        // Replacing a value with one of the same size does not grow the customer: still accepted.
        raw.send(rawRequest("POST", "/track/v2/projects/t/customers",
                            body: Body.customer(ids: ["cookie": "big"], properties: #"{"k0": "\#(value)"}"#)))
        #expect(raw.response()?.status == 200)
        // Another customer has a bound of its own.
        raw.send(rawRequest("POST", "/track/v2/projects/t/customers",
                            body: Body.customer(ids: ["cookie": "small"], properties: #"{"k": "\#(value)"}"#)))
        #expect(raw.response()?.status == 200)
        #expect(emulator.customer(cookie: "small")?.properties.count == 1)
    }

    // MARK: Browsers

    private func post(origin: String?, fetchSite: String?) throws -> (status: Int?, emulator: SegmentsEmulator) {
        let emulator = SegmentsEmulator()
        try emulator.start()
        defer { emulator.stop() }
        emulator.injectFault(.delay(0), on: .event)
        let raw = try RawConnection(port: emulator.port!)
        defer { raw.close() }
        var headers: [String] = []
        if let origin { headers.append("Origin: \(origin)") }
        if let fetchSite { headers.append("Sec-Fetch-Site: \(fetchSite)") }
        raw.send(rawRequest("POST", Self.eventsPath, body: Body.event("e", ids: ["cookie": "c"]), extraHeaders: headers))
        return (raw.response()?.status, emulator)
    }

    @Test(arguments: ["http://evil.example", "http://evil.example:8080", "https://127.0.0.1", "null",
                      "http://127.0.0.1.evil.example", "http://localhost@evil.example", "http://[::2]:80",
                      "http://localhost:3000/path", "file://", "http://10.0.0.1"])
    func aBrowserRequestFromAnotherOriginIsRefusedWithoutAnyEffect(origin: String) throws {
        let (status, emulator) = try post(origin: origin, fetchSite: nil)
        #expect(status == 403)
        #expect(emulator.events.isEmpty, "nothing recorded")
        #expect(emulator.customers.isEmpty)
        #expect(emulator.pendingFaultCount == 1, "no fault consumed")
    }

    @Test(arguments: [nil, "http://127.0.0.1", "http://127.0.0.1:8080", "http://localhost:3000", "http://[::1]:9", "HTTP://LOCALHOST"])
    func requestsWithoutOriginOrFromALoopbackOriginAreServed(origin: String?) throws {
        let (status, emulator) = try post(origin: origin, fetchSite: origin == nil ? nil : "same-site")
        #expect(status == 200)
        #expect(emulator.events.map(\.eventType) == ["e"])
        #expect(emulator.pendingFaultCount == 0)
    }

    @Test(arguments: [nil, "http://127.0.0.1:8080"])
    func aCrossSiteFetchIsRefusedWhateverItsOrigin(origin: String?) throws {
        let (status, emulator) = try post(origin: origin, fetchSite: "cross-site")
        #expect(status == 403)
        #expect(emulator.events.isEmpty)
        #expect(emulator.pendingFaultCount == 1)
    }
}

private extension EmulatorLimits {
    func with(_ change: (inout EmulatorLimits) -> Void) -> EmulatorLimits {
        var copy = self
        change(&copy)
        return copy
    }
}

private extension RawResponse {
    var json: EmulatorJSON? { try? EmulatorJSON(jsonData: Data(body)) }
}
