import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// SPEC T: triggers and scheduling of automatic reloads.
@Suite struct TriggerTests {
    @Test func t1_registeringAListenerWhileConfiguredRequestsADebouncedReload() async {
        let harness = EngineHarness()
        harness.configure()
        harness.listen(includeFirstLoad: false)
        await harness.advance(by: 4.9)
        #expect(harness.fetchCount == 0)
        await harness.advance(by: 0.1)
        #expect(harness.fetchCount == 1)
    }

    @Test func t1_registeringBeforeConfigureRequestsNothing() async {
        let harness = EngineHarness()
        harness.listen(includeFirstLoad: false)
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func t2_configureWithoutListenersLogsAndSkips() async {
        let harness = EngineHarness()
        harness.configure()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(harness.logger.count(of: "Segments: Skipping initial segments update process for no callback") == 1)
    }

    @Test func t2_configureWithoutFirstLoadListenersLogsAndSkips() async {
        let harness = EngineHarness()
        harness.listen(includeFirstLoad: false)
        harness.configure()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(harness.logger.count(of: "Segments: Skipping initial segments update process as is not required") == 1)
    }

    @Test func t2_configureWithAFirstLoadListenerReloadsAfterTheDebounce() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        harness.configure()
        await harness.advance(by: 4.9)
        #expect(harness.fetchCount == 0)
        await harness.advance(by: 0.1)
        #expect(harness.fetchCount == 1)
        #expect(recorder.all == [[Fixture.s1]])
    }

    @Test func t3_uploadWithoutListenersLogsAndDoesNotReload() async {
        let harness = EngineHarness()
        harness.configure()
        harness.engine.reloadAfterUpload()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(
            harness.logger.count(
                of: "Segments: Skipping segments update process after tracked event due to no callback registered") == 1)
    }

    @Test func t3_uploadWithListenersRequestsAReload() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        harness.engine.reloadAfterUpload()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)
    }

    @Test func t4_identifyWithNewHardIdsRequestsAReload() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        harness.engine.identify(hardIds: ["registered": "jane@example.com"])
        await harness.advance(by: 5)
        #expect(harness.repository.fetches == [CustomerIds(["cookie": "cookie-a", "registered": "jane@example.com"])])
    }

    @Test func t4_identifyWithUnchangedIdsRequestsNothing() async {
        let harness = EngineHarness(customer: CustomerIds(["cookie": "cookie-a", "registered": "jane"]))
        harness.listen()
        harness.configure()
        harness.engine.identify(hardIds: ["registered": "jane"])
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
    }

    @Test func t5_thirtyThreeTriggersInOneWindowFetchExactlyOnce() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        for _ in 0..<33 {
            harness.engine.reloadAfterUpload()
            await harness.advance(by: 0.1)
        }
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 1)
    }

    @Test func t5_eachTriggerRestartsTheTrailingDebounce() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        await harness.advance(by: 4)
        harness.engine.reloadAfterUpload()
        await harness.advance(by: 4)
        #expect(harness.fetchCount == 0)
        await harness.advance(by: 1)
        #expect(harness.fetchCount == 1)
    }

    @Test func t5_aTriggerEvery4sFor2MinutesStillReloadsWithinMaxWait() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        var fetchTimes: [TimeInterval] = []
        let start = harness.scheduler.now()
        for _ in 0..<30 {
            let before = harness.fetchCount
            harness.engine.reloadAfterUpload()
            for _ in 0..<4 {
                await harness.advance(by: 1)
                if harness.fetchCount > before && fetchTimes.count < harness.fetchCount {
                    fetchTimes.append(harness.scheduler.now().timeIntervalSince(start))
                }
            }
        }
        // Bursts start at 0 (listener), 32, 64+ … and each fires 30 s after its first request.
        #expect(fetchTimes == [30, 62, 94])
    }

    @Test func t6_requestsDuringAFlightOweExactlyOneDebouncedFollowUp() async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)
        for _ in 0..<5 { harness.engine.reloadAfterUpload() }
        await harness.advance(by: 2)  // the flight lands; the follow-up is debounced
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 2)
        await harness.advance(by: 120)
        #expect(harness.fetchCount == 2)
    }

    @Test func t7_transientFailuresRetryWithDoublingBackoff() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(3, with: Fixture.transient)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)
        #expect(harness.scheduler.pendingDelays == [2])
        await harness.advance(by: 2)
        #expect(harness.scheduler.pendingDelays == [4])
        await harness.advance(by: 4)
        #expect(harness.scheduler.pendingDelays == [8])
        await harness.advance(by: 8)
        #expect(harness.fetchCount == 4)
        #expect(harness.scheduler.pendingWorkCount == 0)
    }

    @Test func t7_retryAfterPostponesTheRetry() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(
            with: SegmentsError(.httpStatus, "slow down", httpStatus: 429, retryAfter: 20))
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [20])
        await harness.advance(by: 19.9)
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 0.1)
        #expect(harness.fetchCount == 2)
    }

    @Test func t7_permanentFailuresAreNotRetried() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.permanent)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        await harness.advance(by: 600)
        #expect(harness.fetchCount == 1)
    }

    @Test func t7_backoffIsCappedAt60Seconds() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(10, with: Fixture.transient)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        var delays: [TimeInterval] = []
        for _ in 0..<7 {
            let delay = harness.scheduler.pendingDelays.first ?? -1
            delays.append(delay)
            await harness.advance(by: delay)
        }
        #expect(delays == [2, 4, 8, 16, 32, 60, 60])
    }

    @Test func t7_noRetryOnceTheLastListenerIsGone() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.configure()
        let (_, token) = harness.listen()
        await harness.advance(by: 5)
        harness.engine.removeListener(token)
        await harness.advance(by: 600)
        #expect(harness.fetchCount == 1)
        #expect(harness.logger.count(of: "Segments: Skipping segments reload process for no callback") == 1)
    }

    @Test func t7_debounceFiringWithoutListenersLogsAndStops() async {
        let harness = EngineHarness()
        let (_, token) = harness.listen()
        harness.configure()
        harness.engine.reloadAfterUpload()
        harness.engine.removeListener(token)
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        #expect(harness.logger.count(of: "Segments: Skipping segments reload process for no callback") == 1)
    }

    @Test func t7_aChangedCustomerEndsTheBackoffOfTheOldOne() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        harness.engine.identify(hardIds: ["registered": "b"])
        await harness.advance(by: 5)
        let b = CustomerIds(["cookie": "cookie-a", "registered": "b"])
        #expect(harness.repository.fetches == [Fixture.customerA, b])
        await harness.advance(by: 600)
        #expect(harness.fetchCount == 2)
    }

    @Test func t8_nonImmediateFlushingWithListenersWarnsOnce() async {
        let harness = EngineHarness()
        let warning =
            "Segments: Segment accuracy needs the immediate flushing mode: events tracked in other modes reach the server late"
        harness.configure()
        harness.engine.setTrackingImmediate(false)
        #expect(harness.logger.count(of: warning) == 0)
        harness.listen()
        harness.listen(.content())
        harness.engine.setTrackingImmediate(false)
        #expect(harness.logger.count(of: warning) == 1)
        #expect(harness.logger.entries.first { $0.message == warning }?.level == .warning)
    }

    @Test func t9_afterStopNothingIsScheduledAndLateResultsAreDropped() async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        harness.configure()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)
        harness.engine.stop()
        await harness.advance(by: 2)
        harness.engine.reloadAfterUpload()
        #expect(harness.scheduler.pendingWorkCount == 0)
        #expect(recorder.count == 0)
        #expect(harness.baselineStore.load() == .empty)
    }
}
