import Foundation
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// Every fault the emulator can inject, against the real client over loopback: no crash, no
/// listener called with bad data, the baseline kept, every read answered exactly once, and
/// recovery once the server heals (issue 7, WIRE.md "Status handling", SPEC D9, G4, T7).
@Suite(hangTimeLimit(minutes: 2)) struct FaultMatrixTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let fault: EmulatorFault
        let count: Int
        /// The read's error; `nil` when the transport may legitimately recover by itself.
        let expected: SegmentsError.Code?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "500 for 3 requests", fault: .status(500), count: 3, expected: .httpStatus),
        Case(name: "429 with Retry-After", fault: .status(429, retryAfter: "1"), count: 1, expected: .httpStatus),
        Case(name: "time-out", fault: .delay(1.5), count: 1, expected: .timeout),
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
        let client = try harness.makeClient(requestTimeout: 0.5)
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        #expect(await eventually { told.all.last == [.browsers] })
        // A follow-up reload may still be in flight; a read would join it (G2) and miss the fault.
        await quiescent(harness.emulator)
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
        await quiescent(harness.emulator)  // a retry may still carry the last fault; a read would join it
        let healed = try await client.getSegments(force: true, category: .discovery())
        #expect(healed == [.browsers])
        try? await Task.sleep(nanoseconds: 200_000_000)  // room for a stray late answer or delivery
        #expect(answers.count == 1)
        #expect(told.all == toldBefore)  // never told bad data, and the baseline was never wiped
    }

    /// Waits until the emulator has seen no request for 300 ms.
    func quiescent(_ emulator: SegmentsEmulator) async {
        var seen = -1
        while seen != emulator.requests.count {
            seen = emulator.requests.count
            try? await Task.sleep(nanoseconds: 300_000_000)
        }
    }
}
