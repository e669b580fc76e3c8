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
        let slow = try RawConnection(port: emulator.port!, timeout: 10)
        let trickling = EmulatorLocked(true)
        let fd = slow.fd
        Thread.detachNewThread {
            let started = Date()
            while trickling.value && Date().timeIntervalSince(started) < 8 {
                var byte = UInt8(ascii: "a")
                #if canImport(Glibc)
                let flags = Int32(MSG_NOSIGNAL)
                #else
                let flags: Int32 = 0
                #endif
                guard send(fd, &byte, 1, flags) == 1 else { return }
                usleep(200_000)
            }
        }
        let started = Date()
        let read = slow.readResponse()
        trickling.withLock { $0 = false }

        guard case .response(let response) = read else {
            Issue.record("expected 408, got \(read)")
            return
        }
        #expect(response.status == 408)
        #expect(Date().timeIntervalSince(started) < 5, "dropped at the deadline, not when the client stopped")
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

    @Test func failingAcceptBacksOffInsteadOfSpinning() throws {
        // `accept` failing as at the descriptor limit (EMFILE): the connection stays queued and
        // the listener stays readable.
        let calls = EmulatorLocked(0)
        let server = try EmulatorSocketServer(
            port: 0, limits: EmulatorLimits(),
            accept: { _ in
                calls.withLock { $0 += 1 }
                return .failed(EMFILE)
            },
            respond: { _ in .error(500, "unused") })
        let waiting = try RawConnection(port: server.port)
        defer { waiting.close() }
        let observed = Date()
        while Date().timeIntervalSince(observed) < 0.5 { usleep(10_000) }
        let count = calls.value

        let stopping = Date()
        server.stop()

        #expect(count >= 1)
        #expect(count < 50, "\(count) accept calls in 0.5 s: spinning")
        #expect(Date().timeIntervalSince(stopping) < 2, "stop() wakes the back-off")
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
