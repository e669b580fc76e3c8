import Foundation
@testable import SegmentsEmulator
import SegmentsTesting
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The emulator is a developer tool, but it listens on a port: it must not be held, spun, leaked
/// into child processes, reached through DNS rebinding or made to grow without bound (issue 13).
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct EmulatorHardeningTests {
    @Test func aClientTricklingBytesLosesItsConnectionAtTheRequestDeadline() throws {
        // Each byte comes well within the read time-out, so only a per-request deadline ends it.
        let emulator = SegmentsEmulator(limits: EmulatorLimits(readTimeout: 1, requestDeadline: 1))
        try emulator.start()
        defer { emulator.stop() }
        let slow = try RawConnection(port: emulator.port!, timeout: 30)
        defer { slow.close() }
        // 40 s of trickling, one byte per 0.2 s: the client never stops on its own before the
        // answer, so an answer while it still trickles can only be the deadline's.
        let planned = 200
        let drip = Drip(slow.fd, every: 200_000, limit: planned)
        defer { drip.finish() }  // before `slow` closes (defers run last first)
        let read = slow.readResponse()
        let sentWhenAnswered = drip.sent

        guard case .response(let response) = read else {
            Issue.record("expected 408, got \(read)")
            return
        }
        #expect(response.status == 408)
        #expect(sentWhenAnswered >= 1, "the trickle had started")
        #expect(sentWhenAnswered < planned, "dropped at the deadline, while the client was still sending")
    }

    @Test func everyDescriptorClosesOnExec() throws {
        let emulator = SegmentsEmulator()
        try emulator.start()
        defer { emulator.stop() }
        let connection = try RawConnection(port: emulator.port!)
        defer { connection.close() }
        connection.send(rawRequest("GET", "/webxp/projects/t/segments?cookie=c"))
        #expect(connection.response()?.status == 200)

        let descriptors = emulator.server.withLock { $0?.descriptors } ?? []
        #expect(descriptors.count >= 4, "listener, wake pipe and the open connection")
        for fd in descriptors {
            #expect(EmulatorPOSIX.closesOnExec(fd), "descriptor \(fd) would leak into a child process")
        }
    }

    /// Proven by a lower bound, which load only makes longer: `accept` fails six times (as at
    /// the descriptor limit, EMFILE: the connection stays queued and the listener readable), then
    /// works; the connection cannot be answered before the six back-offs (0.01 + 0.02 + … + 0.32 s)
    /// have passed. A loop that spun would answer it in microseconds.
    @Test func failingAcceptBacksOffInsteadOfSpinning() throws {
        let failures = 6
        let calls = EmulatorLocked(0)
        let server = try EmulatorSocketServer(
            port: 0, limits: EmulatorLimits(),
            accept: { listener in
                let call = calls.withLock { calls in
                    calls += 1
                    return calls
                }
                return call <= failures ? .failed(EMFILE) : EmulatorPOSIX.accept(listener)
            },
            respond: { _ in .error(500, "answered") })
        defer { server.stop() }
        let started = Date()
        let waiting = try RawConnection(port: server.port, timeout: 30)
        defer { waiting.close() }
        waiting.send(rawRequest("GET", "/webxp/projects/t/segments?cookie=c"))
        #expect(waiting.response()?.status == 500)
        let elapsed = Date().timeIntervalSince(started)

        let backoffs = (0..<failures).map { 0.01 * pow(2, Double($0)) }.reduce(0, +)  // 0.63 s
        #expect(server.acceptFailures.value == failures)
        // 10% below: the wall clock and poll(2) may round the milliseconds differently.
        #expect(elapsed >= backoffs * 0.9, "answered \(elapsed) s after connecting, before \(failures) back-offs (\(backoffs) s): spinning")
    }

    @Test func stopReturnsDuringTheAcceptBackOff() throws {
        let server = try EmulatorSocketServer(
            port: 0, limits: EmulatorLimits(), accept: { _ in .failed(EMFILE) }, respond: { _ in .error(500, "unused") })
        let waiting = try RawConnection(port: server.port)
        defer { waiting.close() }
        // At least one failure: the loop is in (or about to enter) its back-off when stop comes.
        let deadline = Date().addingTimeInterval(30)
        while server.acceptFailures.value == 0 && Date() < deadline { usleep(1_000) }
        #expect(server.acceptFailures.value >= 1)
        let stopping = Date()
        server.stop()
        #expect(Date().timeIntervalSince(stopping) < 2, "stop() did not return")
    }

    @Test(arguments: ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "127.0.0.+1", "[::2]:80", "10.0.0.1"])
    func aHostThatIsNotLoopbackIsRefused(host: String) throws {
        let emulator = SegmentsEmulator()
        try emulator.start()
        defer { emulator.stop() }
        let connection = try RawConnection(port: emulator.port!)
        defer { connection.close() }
        let body = #"{"customer_ids":{"cookie":"c"},"event_type":"x","properties":{}}"#
        let request = rawRequest("POST", "/track/v2/projects/t/customers/events", body: body)
            .replacingOccurrences(of: "Host: 127.0.0.1", with: "Host: \(host)")
        connection.send(request)

        #expect(connection.response()?.status == 403)
        #expect(emulator.events.isEmpty, "nothing processed")
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:8080", "localhost:9", "LOCALHOST", "[::1]:8080", "127.9.9.9"])
    func loopbackHostsAreServed(host: String) throws {
        #expect(EmulatorHostCheck.isLoopback(host))
    }

    @Test func storedRecordsAreBounded() {
        var state = EmulatorState(maxLoggedRequests: 10, maxStoredRecords: 100)
        for index in 0..<1_000 {
            state.record(EmulatorEvent(integration: .project(token: "t"), eventType: "e", customerIds: ["cookie": "c\(index)"]))
            state.record(EmulatorLink(integration: .project(token: "t"), cookie: "l\(index)", externalIds: ["r": "\(index)"]))
            state.record(EmulatorCustomerUpdate(integration: .project(token: "t"), customerIds: ["cookie": "u\(index)"]))
        }
        #expect(state.events.count < 200)
        #expect(state.links.count < 200)
        #expect(state.customerUpdates.count < 200)
        #expect(state.customers.count < 200)
        #expect(state.events.last?.customerIds["cookie"] == "c999", "the newest are kept")
        #expect(state.events(forCookie: "c999").count == 1, "the indexes follow the trim")
        #expect(state.events(forCookie: "c0").isEmpty)
    }

    @Test func aDeeplyNestedBodyIsRefusedNotACrash() throws {
        let emulator = SegmentsEmulator()
        try emulator.start()
        defer { emulator.stop() }
        let deep = String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000)
        let connection = try RawConnection(port: emulator.port!)
        defer { connection.close() }
        connection.send(rawRequest(
            "POST", "/track/v2/projects/t/customers/events",
            body: #"{"customer_ids":{"cookie":"c"},"event_type":"x","properties":{"p":\#(deep)}}"#))

        #expect(connection.response()?.status == 400)
        #expect(emulator.isRunning)
    }
}
