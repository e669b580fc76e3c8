import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// One-shot reads (Behaviour G).
@Suite(Hang.timeLimit(minutes: 2)) struct OneShotReadTests {
    static let answer: SegmentsByCategory = [.discovery(): [Fixture.s1], .content(): [Fixture.s2, Fixture.s3]]

    /// A configured harness whose baseline was just fetched for the current customer.
    func fresh() async -> EngineHarness {
        let harness = EngineHarness()
        harness.repository.answer(Self.answer)
        harness.configure()
        _ = harness.read(force: true)
        await harness.advance()
        return harness
    }

    @Test func g1_aCacheHitAnswersOnceWithTheRequestedCategoryOnly() async {
        let harness = await fresh()
        await harness.advance(by: 4.9)
        let content = harness.read(.content())
        let missing = harness.read(.merchandising())
        await harness.advance()
        #expect(harness.fetchCount == 1)
        #expect(content.all.map(\.value) == [[Fixture.s2, Fixture.s3]])
        #expect(missing.all.map(\.value) == [[]])
    }

    @Test func g1_aBaselineFiveSecondsOldIsStale() async {
        let harness = await fresh()
        await harness.advance(by: 5)
        let read = harness.read()
        await harness.advance()
        #expect(harness.fetchCount == 2)
        #expect(read.all.map(\.value) == [[Fixture.s1]])
    }

    @Test func g1_aBaselineOfAnotherCustomerIsNeverAnAnswer() async {
        let harness = await fresh()
        harness.engine.identify(hardIds: ["registered": "jane"])
        let read = harness.read()
        await harness.advance()
        #expect(harness.repository.calls.suffix(2) == [
            .link(CustomerIds(["cookie": "cookie-a", "registered": "jane"])),
            .fetch(CustomerIds(["cookie": "cookie-a", "registered": "jane"])),
        ])
        #expect(read.count == 1)
    }

    @Test func g2_forceAlwaysFetches() async {
        let harness = await fresh()
        let read = harness.read(force: true)
        await harness.advance()
        #expect(harness.fetchCount == 2)
        #expect(read.count == 1)
    }

    @Test func g2_aThousandConcurrentReadsShareOneRequestAndAreEachAnsweredOnce() async {
        let harness = EngineHarness()
        harness.repository.answer(Self.answer)
        harness.configure()
        let answers = Recorder<Int>()
        DispatchQueue.concurrentPerform(iterations: 1000) { index in
            harness.engine.getSegments(force: true, category: .content()) { result in
                if (try? result.get()) == [Fixture.s2, Fixture.s3] { answers.record(index) }
            }
        }
        await harness.advance()
        #expect(harness.fetchCount == 1)
        #expect(answers.count == 1000)
        #expect(Set(answers.all).count == 1000)
    }

    @Test func g2_aReadJoinsTheAutomaticReloadInFlight() async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.repository.answer(Self.answer)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)  // the automatic reload is in flight
        let read = harness.read(force: true)
        await harness.advance(by: 2)
        #expect(harness.fetchCount == 1)
        #expect(read.all.map(\.value) == [[Fixture.s1]])
    }

    @Test func g3_aOneShotFetchUpdatesTheBaselineAndNotifiesListenersOfChanges() async {
        let harness = await fresh()
        let (recorder, _) = harness.listen()
        await harness.advance(by: 5)
        harness.repository.answer([.discovery(): [Fixture.s3]])
        let read = harness.read(force: true)
        await harness.advance()
        #expect(read.all.map(\.value) == [[Fixture.s3]])
        #expect(recorder.all == [[Fixture.s3]])
        #expect(harness.baselineStore.load().snapshot?.segments == [.discovery(): [Fixture.s3]])
    }

    @Test func g4_aFailedReadIsAnsweredOnceWithTheError() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.configure()
        let read = harness.read()
        await harness.advance(by: 60)
        #expect(read.count == 1)
        #expect(read.last?.error?.httpStatus == 503)
        #expect(harness.fetchCount == 1)  // a read alone is not retried: no listener wants it
    }

    @Test func g4_aReadBeforeConfigureIsAnsweredOnceConfigured() async {
        let harness = EngineHarness()
        harness.repository.answer(Self.answer)
        let read = harness.read(.content())
        await harness.advance(by: 60)
        #expect(read.count == 0)
        harness.configure()
        await harness.advance()
        #expect(read.all.map(\.value) == [[Fixture.s2, Fixture.s3]])
    }

    @Test func g4_aReadBeforeConfigureFailsOnStop() async {
        let harness = EngineHarness()
        let read = harness.read()
        harness.engine.stop()
        harness.drainDeliveries()
        #expect(read.all.map(\.error?.code) == [.stopped])
    }

    @Test func g4_aReadAfterStopFailsAtOnce() async {
        let harness = EngineHarness()
        harness.configure()
        harness.engine.stop()
        let read = harness.read()
        harness.drainDeliveries()
        #expect(read.all.map(\.error?.code) == [.stopped])
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func g4_aReadInFlightIsAnsweredOnceOnStopAndOnAnonymize() async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.configure()
        let anonymized = harness.read()
        await harness.advance(by: 1)
        harness.engine.anonymize()
        let stopped = harness.read()
        await harness.advance(by: 1)
        harness.engine.stop()
        await harness.advance(by: 10)
        #expect(anonymized.all.map(\.value) == [[]])
        #expect(stopped.all.map(\.error?.code) == [.stopped])
    }

    @Test func g5_theAsyncFormReturnsTheListOrThrowsSegmentsError() async throws {
        let harness = await fresh()
        let cached = try await harness.engine.getSegments(category: .discovery())
        #expect(cached == [Fixture.s1])
        harness.engine.stop()
        await #expect(throws: SegmentsError.self) {
            try await harness.engine.getSegments(category: .discovery())
        }
    }

    @Test func g6_aReadRetriesForTheNewCustomerWithItsCookie() async {
        let harness = EngineHarness()
        harness.repository.delay = 1
        // The anonymous customer's flight answers s1, the identified customer's s2: delivering
        // the first (stale) answer to the read would give s1.
        harness.repository.answerNextFetch(with: [.discovery(): [Fixture.s1]])
        harness.repository.answerNextFetch(with: [.discovery(): [Fixture.s2]])
        harness.configure()
        let read = harness.read(force: true)
        await harness.advance(by: 0.5)
        harness.engine.identify(hardIds: ["registered": "jane"])
        await harness.advance(by: 10)
        #expect(read.all.map(\.value) == [[Fixture.s2]])
        let jane = CustomerIds(["cookie": "cookie-a", "registered": "jane"])
        #expect(harness.repository.fetches == [Fixture.customerA, jane])  // the retry keeps the cookie
        #expect(harness.repository.links == [jane])
    }

    @Test func g6_aReadGivesUpAfterThreeCustomerChanges() async {
        let harness = EngineHarness()
        harness.repository.delay = 1
        harness.configure()
        let read = harness.read(force: true)
        for index in 0..<4 {
            await harness.advance(by: 0.5)
            harness.engine.identify(hardIds: ["registered": "user-\(index)"])
            await harness.advance(by: 0.5)
        }
        await harness.advance(by: 10)
        #expect(read.all.map(\.error?.code) == [.customerChanged])
        // The first flight fetches; the three retries are for identified customers and stop
        // after their link, when the check before the fetch sees the customer changed (C2).
        #expect(harness.repository.calls.count == 4)
        #expect(harness.repository.links.map { $0.values["registered"] } == ["user-0", "user-1", "user-2"])
    }
}

extension OneShotReadTests {
    @Test func g4_aCancelledAsyncReadThrowsCancelledOnceWhileTheSharedFetchServesTheOthers() async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.repository.answer(Self.answer)
        harness.configure()
        let other = harness.read(force: true)
        let cancelled = Task { try await harness.engine.getSegments(force: true, category: .discovery()) }
        cancelled.cancel()
        var thrown: SegmentsError?
        do { _ = try await cancelled.value } catch { thrown = error as? SegmentsError }
        #expect(thrown?.code == .cancelled)
        await harness.advance(by: 2)
        #expect(other.all.map(\.value) == [[Fixture.s1]])
        #expect(harness.fetchCount == 1)
    }

    /// Revision 2: the async form resumes the awaiting task directly, so a delivery queue blocked
    /// by a slow listener does not hold up an `await`.
    @Test func g4_theAsyncFormIsAnsweredEvenWhileTheDeliveryQueueIsBlocked() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        await harness.advance()
        harness.deliveryQueue.suspend()  // as if a listener were stuck
        let answered = DispatchSemaphore(value: 0)
        let answer = Locked<[Segment]?>(nil)
        let engine = harness.engine
        // The read runs on a thread of its own: a task on the cooperative pool could wait for a
        // thread longer than the bounded wait below, while the run's other tests keep the pool busy.
        let reading = Task(executorPreference: DedicatedThreadExecutor()) {
            let segments = try await engine.getSegments(force: true, category: .discovery())
            answer.withLock { $0 = segments }
            answered.signal()
        }
        while harness.scheduler.pendingWorkCount == 0 { await Task.yield() }  // its fetch is scheduled
        await harness.scheduler.advance()
        // Answered through the delivery queue, the read would wait until the queue resumes.
        let answeredWhileBlocked = await signalled(answered)
        harness.deliveryQueue.resume()
        try await reading.value
        #expect(answeredWhileBlocked)
        #expect(answer.value == [Fixture.s1])
    }

    @Test func g4_readsWaitingForConfigureAreBoundedAndTheExtraOnesFailClearly() async {
        let harness = EngineHarness()
        let reads = (0..<1_001).map { _ in harness.read() }
        harness.drainDeliveries()
        #expect(reads.prefix(1_000).allSatisfy { $0.count == 0 })
        #expect(reads[1_000].all.first?.error?.code == .notConfigured)
        harness.configure()
        await harness.advance()
        #expect(reads.prefix(1_000).allSatisfy { $0.count == 1 })
        #expect(harness.fetchCount == 1)
    }
}
