import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Issue 7, item 5: 8 threads × 10,000 mixed calls on one client with the live scheduler: no
/// crash, no deadlock, no read lost or answered twice. Its listeners are rarely called (the answer
/// never changes); that a removed listener is never called, while listeners really are being
/// called, is `ListenerRemovalRaceTests`' claim.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct ConcurrencyStressTests {
    @Test func eightThreadsOfMixedCallsNeverCrashDeadlockOrLoseARead() async throws {
        let repository = RecordingSegmentRepository()
        repository.answer([.discovery(): [Segment(id: "s1", segmentationId: "g1")], .content(): []])
        let client = SegmentsClient(
            options: .init(runtime: SegmentsRuntime(logger: RecordingLogger(level: .none)), timings: SegmentationTimings(debounce: DebouncePolicy(delay: 0.001, maxWait: 0.01), cache: CacheFreshness(maxAge: 0.002)), uploadRetry: RetryBackoff(initial: 0.001, maximum: 0.01), storage: .inMemory))
        try client.configure(.init(backend: .custom(id: "stress", repository: repository, uploader: RecordingEventUploader())))
        defer { client.stop() }

        let threads = 8
        let callsPerThread = 10_000
        let answers = Locked([Int](repeating: 0, count: threads * callsPerThread))
        let issuedReads = Locked(0)

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var tokens: [ListenerToken] = []
            for call in 0..<callsPerThread {
                let id = thread * callsPerThread + call
                switch call % 8 {
                case 0, 1:
                    let category: SegmentCategory = call % 16 == 0 ? .content() : .discovery()
                    tokens.append(client.addListener(category: category, includeFirstLoad: true) { _ in })
                case 2, 3:
                    if let token = tokens.popLast() { client.removeListener(token) }
                case 4, 5:
                    issuedReads.withLock { $0 += 1 }
                    client.getSegments(force: call % 10 == 4, category: .discovery()) { _ in
                        answers.withLock { $0[id] += 1 }
                    }
                case 6:
                    try? client.trackEvent(properties: ["call": .int(call)], timestamp: nil, eventType: "stress")
                default:
                    if call % 1_000 == 7 {
                        client.anonymize()
                    } else {
                        try? client.identifyCustomer(customerIds: ["registered": "user-\(call % 50)"], properties: [:], timestamp: nil)
                    }
                }
            }
        }

        // Every read is answered — a deadlock or a lost read would time out here.
        let expected = issuedReads.value
        let deadline = Date().addingTimeInterval(Hang.scaled(60))
        while answers.withLock({ $0.reduce(0, +) }) < expected && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let counts = answers.value
        #expect(counts.reduce(0, +) == expected)
        #expect(counts.allSatisfy { $0 <= 1 })  // none answered twice
    }

    @Test func d7_aHandlerMayRemoveItsOwnListener() async throws {
        let repository = RecordingSegmentRepository()
        let client = SegmentsClient(options: .init(runtime: SegmentsRuntime(logger: RecordingLogger(level: .none)), storage: .inMemory))
        try client.configure(.init(backend: .custom(id: "self-removal", repository: repository, uploader: RecordingEventUploader())))
        defer { client.stop() }
        let calls = Locked(0)
        let token = Locked<ListenerToken?>(nil)
        token.withLock { slot in
            slot = client.addListener(category: .discovery(), includeFirstLoad: true) { _ in
                calls.withLock { $0 += 1 }
                if let own = token.value { client.removeListener(own) }
            }
        }
        // Reads in the completion form: its answer is queued on the delivery queue after the
        // listener calls of the same fetch (see Behaviour G4), so once it arrives they have run.
        func readOnTheDeliveryQueue() async throws -> [Segment] {
            try await withCheckedContinuation { continuation in
                client.getSegments(force: true, category: .discovery()) { continuation.resume(returning: $0) }
            }.get()
        }
        #expect(try await readOnTheDeliveryQueue() == [])  // the first load: the handler runs and removes itself
        #expect(calls.value == 1)
        // A changed answer: a listener still registered would be called with it.
        repository.answer([.discovery(): [Segment(id: "s1", segmentationId: "g1")]])
        #expect(try await readOnTheDeliveryQueue() == [Segment(id: "s1", segmentationId: "g1")])
        #expect(calls.value == 1)
        #expect(client.listenerCount == 0)
    }
}
