import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// Every fault the emulator can inject, against the real client over loopback: no crash, no
/// listener called with bad data, the baseline kept, every read answered exactly once, and
/// recovery once the server heals (issue 7, Behaviour, wire format, "Status handling", see Behaviour D9, G4, T7).
@Suite(Hang.timeLimit(minutes: 2)) struct FaultMatrixTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let fault: EmulatorFault
        let count: Int
        /// The read's error; `nil` when the transport may legitimately recover by itself.
        let expected: SegmentsError.Code?
        /// Every request's deadline. Only the time-out case shortens it (its server delay is
        /// twice the deadline); healthy requests elsewhere get 5 s, which a loaded machine never
        /// comes near on loopback.
        var requestTimeout: TimeInterval = 5
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "500 for 3 requests", fault: .status(500), count: 3, expected: .httpStatus),
        Case(name: "429 with Retry-After", fault: .status(429, retryAfter: "1"), count: 1, expected: .httpStatus),
        Case(name: "time-out", fault: .delay(4), count: 1, expected: .timeout, requestTimeout: 2),
        // libcurl retries an idempotent GET whose reused keep-alive connection closed before any
        // response byte, so the read may succeed on a fresh connection.
        Case(name: "connection dropped", fault: .dropConnection, count: 1, expected: nil),
        Case(name: "connection dropped mid-body", fault: .dropMidBody, count: 1, expected: .network),
        Case(name: "truncated body", fault: .truncatedBody, count: 1, expected: .network),
        Case(name: "malformed JSON", fault: .malformedJSON, count: 1, expected: .invalidResponse),
        Case(name: "wrong shape", fault: .wrongShape, count: 1, expected: .invalidResponse),
        Case(name: "10 MB body", fault: .oversizedBody(bytes: 10_000_000), count: 1, expected: .invalidResponse),
        Case(name: "401", fault: .status(401), count: 1, expected: .unauthorized),
    ]

    @Test(arguments: cases)
    func faultLeavesStateIntactAndTheClientRecovers(_ fault: Case) async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let scheduler = OutstandingWorkScheduler()
        let deliveryQueue = DispatchQueue(label: "fault-matrix.delivery")
        let client = try harness.makeClient(requestTimeout: fault.requestTimeout, scheduler: scheduler, deliveryQueue: deliveryQueue)
        defer { client.stop() }
        // The customer's segments are fixed on the server, so the listener's first load is the
        // only request before the fault: once it has been delivered nothing is in flight or owed,
        // and the read below starts its own fetch (it cannot join an earlier one, see Behaviour G2).
        let cookie = try #require(client.customerCookie)
        harness.emulator.setFixedSegments(
            ["discovery": [EmulatorSegment(id: "browsers", segmentationId: "engagement")]], forCookie: cookie)
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.all == [[.browsers]] })
        #expect(harness.emulator.requests(on: .fetch).count == 1)
        let toldBefore = told.all

        harness.emulator.injectFault(fault.fault, on: .fetch, count: fault.count)
        let answers = Recorder<Result<[Segment], SegmentsError>>()
        client.getSegments(force: true, category: .discovery()) { answers.record($0) }
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "no_rule")  // an automatic reload too
        #expect(await eventually { answers.count == 1 })
        switch (answers.all.first, fault.expected) {
        case (.failure(let error), let expected?): #expect(error.code == expected)
        case (.success(let segments), nil): #expect(segments == [.browsers])
        case (.failure(let error), nil): #expect(error.code == .network)
        case (let answer, _): Issue.record("the read during the fault should fail, got \(String(describing: answer))")
        }

        #expect(await eventually { harness.emulator.pendingFaultCount == 0 })
        // No fault is left, but the flight that drew the last one may still be out: a read joining
        // it fails (G2). Only that one flight can fail, so the read after it must succeed.
        var healed = try? await client.getSegments(force: true, category: .discovery())
        if healed == nil { healed = try? await client.getSegments(force: true, category: .discovery()) }
        #expect(healed == [.browsers])
        // No room of time for a stray late answer or delivery: every piece of the client's work
        // (fetches, retries, timers) has ended, and then every delivery queued by it has run.
        #expect(await eventually { scheduler.outstanding == 0 }, "\(scheduler.outstanding) pieces of work never ended")
        await drained(deliveryQueue)
        #expect(answers.count == 1)
        #expect(told.all == toldBefore)  // never told bad data, and the baseline was never wiped
    }
}
