import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// Triggers and scheduling of automatic reloads (Behaviour T).
@Suite(Hang.timeLimit(minutes: 2)) struct TriggerTests {
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
        harness.engine.itemUploaded()
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
        harness.engine.itemUploaded()
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
            harness.engine.itemUploaded()
            await harness.advance(by: 0.1)
        }
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 1)
    }

    @Test func t5_eachTriggerRestartsTheTrailingDebounce() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()  // trigger 1 at 0 s (the listener's first load)
        // Triggers 2–4 at 4, 8 and 12 s: each lands inside the 5 s debounce of the one before, so
        // a fixed window (5 s after the first) or one restarted only once would have fired.
        for _ in 0..<3 {
            await harness.advance(by: 4)
            harness.engine.itemUploaded()
        }
        await harness.advance(by: 4.9)  // 16.9 s: 4.9 s after the last trigger
        #expect(harness.fetchCount == 0)
        await harness.advance(by: 0.1)  // 17 s: 5 s after the last trigger
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 60)
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
            harness.engine.itemUploaded()
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
        // Each fetch takes 20 s, four times the debounce: a debounce that ignored flights would
        // start a second fetch while the first is still out.
        harness.repository.delay = 20
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 1)  // out from 5 s to 25 s
        for second in 0..<5 {
            harness.engine.itemUploaded()
            await harness.advance(by: second == 4 ? 1 : 3)  // requests at 5, 8, 11, 14 and 17 s
        }
        await harness.advance(by: 6)  // 24 s: still in flight, nothing else started
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 1)  // 25 s: the flight lands; the follow-up waits for the debounce
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 4.9)
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 0.1)  // 30 s: the one follow-up for all five requests
        #expect(harness.fetchCount == 2)
        await harness.advance(by: 120)
        #expect(harness.fetchCount == 2)
        #expect(harness.repository.peakConcurrentCalls == 1)
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
        harness.engine.itemUploaded()
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
        harness.engine.flushingMode = .manual
        #expect(harness.logger.count(of: warning) == 0)
        harness.listen()
        harness.listen(.content())
        harness.engine.flushingMode = .manual
        #expect(harness.logger.count(of: warning) == 1)
        #expect(harness.logger.entries.first { $0.message == warning }?.level == .warning)
    }

    /// The warning comes when the mode changes, not only when a listener is added: listeners
    /// registered under immediate flushing, then a switch away from it, warn at once; a switch
    /// back to immediate re-arms the warning.
    @Test func t8_switchingAwayFromImmediateFlushingWithListenersWarnsAtOnce() async {
        let harness = EngineHarness()
        let warning =
            "Segments: Segment accuracy needs the immediate flushing mode: events tracked in other modes reach the server late"
        harness.configure()
        harness.engine.flushingMode = .immediate
        harness.listen()
        #expect(harness.logger.count(of: warning) == 0)
        harness.engine.flushingMode = .manual
        #expect(harness.logger.count(of: warning) == 1)
        harness.engine.flushingMode = .immediate
        harness.engine.flushingMode = .manual
        #expect(harness.logger.count(of: warning) == 2)
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
        harness.engine.itemUploaded()
        #expect(harness.scheduler.pendingWorkCount == 0)
        #expect(recorder.count == 0)
        #expect(harness.baselineStore.load() == .empty)
    }

    // MARK: - Revision 2

    /// Defect: a reload owed during a fetch was lost when that fetch failed permanently.
    @Test func t6_aReloadOwedDuringAFetchThatFailsPermanentlyStillRunsOnce() async {
        let harness = EngineHarness()
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)  // the reload T1 asked for: fetch 1
        harness.repository.delay = 2
        harness.repository.failNextFetches(with: Fixture.permanent)
        let read = harness.read(force: true)  // fetch 2, t = 5…7
        await harness.advance(by: 1)
        harness.engine.itemUploaded()  // during the flight: one follow-up is owed
        await harness.advance(by: 1)
        #expect(read.all.first?.error?.httpStatus == 404)
        #expect(harness.fetchCount == 2)
        await harness.advance(by: 4.9)
        #expect(harness.fetchCount == 2)  // debounced …
        await harness.advance(by: 0.1)
        #expect(harness.fetchCount == 3)  // … and then run
        await harness.advance(by: 120)
        #expect(harness.fetchCount == 3)  // exactly one
        #expect(harness.repository.peakConcurrentCalls == 1)
    }

    @Test func t6_steadyTriggersAgainstASlowBackendNeverPutTwoFetchesInFlight() async {
        let harness = EngineHarness()
        harness.repository.delay = 7  // longer than the debounce
        harness.configure()
        harness.listen()
        for second in 0..<120 {
            harness.engine.itemUploaded()
            if second % 10 == 3 { _ = harness.read(force: true) }
            await harness.advance(by: 1)
        }
        await harness.advance(by: 120)
        #expect(harness.fetchCount >= 8)
        #expect(harness.repository.peakConcurrentCalls == 1)
    }

    @Test func t6_reconfiguringKeepsAPendingDebounce() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()  // no first load wanted: nothing requested (T2)
        harness.engine.itemUploaded()
        await harness.advance(by: 2)
        harness.configure()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 1)
    }

    @Test func t6_reconfiguringKeepsAPendingRetry() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.listen()
        harness.configure()
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [2])
        harness.configure()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 2)
    }

    /// Re-configuring requests the pending reload again: a new debounce starts at the
    /// re-configure, the old timer is cancelled (it would fire 3 s earlier).
    @Test func t6_aDebounceIsRequestedAgainFromTheReconfigure() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        harness.engine.itemUploaded()  // the burst starts at 0 s
        await harness.advance(by: 2)
        harness.configure()  // requested again at 2 s
        await harness.advance(by: 4.9)
        #expect(harness.fetchCount == 0)
        await harness.advance(by: 0.1)  // 7 s
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 1)
    }

    /// A new backend, for the same customer or another project's: the flight that was out on the
    /// old backend is discarded, so its late answer never reaches a listener; the owed reload runs
    /// on the new backend, debounced from the re-configure.
    @Test(arguments: [true, false])
    func t6_aFlightOfTheOldBackendIsDiscardedAndTheOwedReloadRunsOnTheNewOne(sameCustomer: Bool) async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let (recorder, _) = harness.listen()
        harness.configure()
        harness.engine.itemUploaded()
        await harness.advance(by: 6)  // out on the first backend until 7 s
        #expect(harness.fetchCount == 1)
        let other: RecordingSegmentRepository
        let customer: CustomerIds
        if sameCustomer {
            other = RecordingSegmentRepository(scheduler: harness.scheduler)
            other.answer([.discovery(): [Fixture.s2]])
            harness.engine.configure(
                .init(repository: other, customerStore: harness.customerStore, baselineStore: harness.baselineStore))
            customer = Fixture.customerA
        } else {
            other = harness.configureOtherProject(cookie: "cookie-b", answering: [.discovery(): [Fixture.s2]])
            customer = CustomerIds(cookie: "cookie-b")
        }
        await harness.advance(by: 4.9)
        #expect(other.fetches.isEmpty)
        await harness.advance(by: 0.1)  // 11 s: 5 s after the re-configure
        #expect(other.fetches == [customer])
        await harness.advance(by: 60)
        #expect(recorder.all == [[Fixture.s2]])  // never the first backend's s1
        #expect(other.fetches.count == 1)
    }

    /// Defect: the attempt counter survived the end of a chain, so the next chain started near the cap.
    @Test func t7_theAttemptCounterRestartsWhenAChainEndsInAPermanentFailure() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(2, with: Fixture.transient)
        harness.repository.failNextFetches(1, with: Fixture.permanent)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [2])
        await harness.advance(by: 2)
        #expect(harness.scheduler.pendingDelays == [4])
        await harness.advance(by: 4)  // permanent: the chain ends
        #expect(harness.scheduler.pendingWorkCount == 0)

        harness.repository.failNextFetches(with: Fixture.transient)
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [2])
    }

    @Test func t7_theAttemptCounterRestartsWhenAChainEndsForLackOfListeners() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(2, with: Fixture.transient)
        harness.configure()
        let (_, token) = harness.listen()
        await harness.advance(by: 7)
        #expect(harness.scheduler.pendingDelays == [4])
        harness.engine.removeListener(token)
        await harness.advance(by: 4)  // the retry finds no listener: the chain ends
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [2])
    }

    @Test func t7_aRetryAfterLongerThanTenMinutesCountsAsTenMinutes() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(
            with: SegmentsError(.httpStatus, "busy", httpStatus: 503, retryAfter: 86_400))
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.scheduler.pendingDelays == [600])
    }

    /// Defect: the cache ran on the wall clock.
    @Test(arguments: [-3600.0, 3600.0])
    func t10_movingTheWallClockAfterAFetchNeitherStretchesNorEndsTheCache(hours offset: TimeInterval) async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        _ = harness.read(force: true)
        await harness.advance()
        harness.scheduler.moveWallClock(by: offset)
        await harness.advance(by: 4.9)
        let cached = harness.read()
        await harness.advance()
        #expect(cached.all.first?.value == [Fixture.s1])
        #expect(harness.fetchCount == 1)
        await harness.advance(by: 0.1)
        _ = harness.read()
        await harness.advance()
        #expect(harness.fetchCount == 2)
    }

    @Test func t10_movingTheWallClockMovesNeitherTheDebounceNorTheBackoff() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.configure()
        harness.listen()
        await harness.advance(by: 3)
        harness.scheduler.moveWallClock(by: -7200)
        harness.engine.itemUploaded()  // the burst's last request: 5 s from here
        harness.scheduler.moveWallClock(by: 86_400)
        await harness.advance(by: 4.9)
        #expect(harness.fetchCount == 0)
        await harness.advance(by: 0.1)
        #expect(harness.fetchCount == 1)
        harness.scheduler.moveWallClock(by: -86_400)
        #expect(harness.scheduler.pendingDelays == [2])
        await harness.advance(by: 2)
        #expect(harness.fetchCount == 2)
    }

    @Test func t10_aPersistedFetchedAtInTheFutureCountsAsStale() async {
        let scheduler = TestScheduler()
        let future = SegmentSnapshot(
            customer: Fixture.customerA, segments: [.discovery(): [Fixture.s1]],
            fetchedAt: scheduler.now().addingTimeInterval(60))
        let harness = EngineHarness(baseline: SegmentBaseline(snapshot: future))
        harness.configure()
        _ = harness.read()
        await harness.advance()
        #expect(harness.fetchCount == 1)
    }

    /// A restart from disk: the first engine fetches and saves through a file store; the second
    /// one, 2 s later on the wall clock (its uptime starts over), reads a new store instance over
    /// the same folder and answers from what the file holds.
    @Test func t10_aPersistedFetchedAtSecondsAgoStillAnswersAfterARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("t10-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let firstStore = FileSegmentBaselineStore(directory: folder, logger: RecordingLogger())
        let first = EngineHarness()
        first.repository.answer([.discovery(): [Fixture.s1]])
        first.engine.configure(first.ports(baselineStore: firstStore))
        let fetched = first.read(force: true)
        await first.advance()
        #expect(fetched.all.first?.value == [Fixture.s1])
        first.drainDeliveries()  // the baseline's save ran

        let secondStore = FileSegmentBaselineStore(directory: folder, logger: RecordingLogger())
        #expect(secondStore !== firstStore)
        let second = EngineHarness()
        second.scheduler.moveWallClock(by: 2)
        second.engine.configure(second.ports(baselineStore: secondStore))
        let read = second.read()
        await second.advance()
        #expect(read.all.first?.value == [Fixture.s1])
        #expect(second.fetchCount == 0)
    }

    /// Defect: a stored empty cookie passed the nil check and failed every fetch forever.
    @Test func c5_aStoredEmptyCookieIsReplacedAndLogged() async {
        let harness = EngineHarness(customer: CustomerIds(["cookie": "", "registered": "jane"]))
        harness.configure()
        let read = harness.read(force: true)
        await harness.advance()
        let expected = CustomerIds(["cookie": "new-cookie-1", "registered": "jane"])
        #expect(harness.engine.customer == expected)
        #expect(harness.customerStore.load() == expected)
        #expect(read.all.first?.error == nil)
        #expect(harness.repository.fetches == [expected])
        #expect(harness.logger.count(of: "Segments: The stored customer had an empty cookie; a new one was made") == 1)
    }
}
