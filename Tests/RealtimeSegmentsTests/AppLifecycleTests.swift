import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The app's lifecycle through `ManualAppLifecycle`, on virtual time: flushing with it (Behaviour
/// E2), background time for the flush on entering the background (E7), and the foreground refresh
/// (T11).
@Suite(Hang.timeLimit(minutes: 2)) struct AppLifecycleTests {
    private static func track(_ harness: ClientHarness, _ types: String...) throws {
        for type in types { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
    }

    private static func uploadedTypes(_ harness: ClientHarness) -> [String] {
        harness.uploader.accepted.map { if case .event(let type) = $0.kind { type } else { "customer" } }
    }

    // MARK: - E2: flushing with the lifecycle

    @Test(arguments: [AppLifecycleEvent.willResignActive, .didEnterBackground])
    func e2_automaticHoldsEventsUntilTheAppLeavesTheForegroundThenUploadsThem(event: AppLifecycleEvent) async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .automatic)
        try Self.track(harness, "a", "b")
        await harness.advance(by: 3600)
        #expect(harness.uploader.attempts.isEmpty)
        #expect(harness.client.queuedEventCount == 2)

        harness.lifecycle.post(event)
        await harness.advance()
        #expect(Self.uploadedTypes(harness) == ["a", "b"])
        #expect(harness.client.queuedEventCount == 0)
    }

    @Test func e2_automaticIgnoresBecomingActiveAndReturningToTheForeground() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .automatic)
        try Self.track(harness, "a")
        harness.lifecycle.post(.didBecomeActive)
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 60)
        #expect(harness.uploader.attempts.isEmpty)
        #expect(harness.lifecycle.backgroundTimeRequests.isEmpty)
    }

    @Test(arguments: [AppLifecycleEvent.willResignActive, .didEnterBackground])
    func e2_periodicAlsoFlushesWhenTheAppLeavesTheForeground(event: AppLifecycleEvent) async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .periodic(seconds: 600))
        try Self.track(harness, "a")
        await harness.advance(by: 10)
        #expect(harness.uploader.attempts.isEmpty)
        harness.lifecycle.post(event)
        await harness.advance()
        #expect(Self.uploadedTypes(harness) == ["a"])
    }

    @Test func e2_manualUploadsNothingWhenTheAppLeavesTheForegroundAndAsksForNoTime() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .manual)
        try Self.track(harness, "a")
        harness.lifecycle.post(.willResignActive)
        harness.lifecycle.post(.didEnterBackground)
        await harness.advance(by: 60)
        #expect(harness.uploader.attempts.isEmpty)
        #expect(harness.lifecycle.backgroundTimeRequests.isEmpty)
        #expect(harness.client.queuedEventCount == 1)
    }

    @Test func e2_switchingToAutomaticAtRunTimeTakesEffectAtOnce() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .immediate)
        harness.client.flushingMode = .automatic
        #expect(harness.client.flushingMode == .automatic)
        try Self.track(harness, "a")
        await harness.advance(by: 60)
        #expect(harness.uploader.attempts.isEmpty)
        harness.lifecycle.post(.willResignActive)
        await harness.advance()
        #expect(Self.uploadedTypes(harness) == ["a"])
    }

    @Test func e2_exponeaAutomaticMapsToTheCoreModeAndBack() async throws {
        let harness = ClientHarness()
        let exponea = Exponea(client: harness.client)
        exponea.flushingMode = .automatic
        #expect(harness.client.flushingMode == .automatic)
        #expect(exponea.flushingMode == .automatic)
        // The getter maps every core mode back, an interval past Int's range included.
        let cases: [(FlushingMode, Exponea.FlushingMode)] = [
            (.immediate, .immediate), (.manual, .manual), (.automatic, .automatic),
            (.periodic(seconds: 30), .periodic(30)), (.periodic(seconds: 0.5), .periodic(1)),
            (.periodic(seconds: 1e300), .periodic(Int.max)),
        ]
        for (core, exponeaMode) in cases {
            harness.client.flushingMode = core
            #expect(exponea.flushingMode == exponeaMode)
        }
    }

    // MARK: - E7: background time for the flush

    @Test func e7_backgroundTimeIsAskedForAndEndedExactlyOnceWhenTheFlushFinishes() async throws {
        let harness = ClientHarness()
        harness.uploader.delay = 2
        try harness.configure(flushingMode: .periodic(seconds: 600))
        try Self.track(harness, "a", "b")
        harness.lifecycle.post(.didEnterBackground)
        #expect(harness.lifecycle.backgroundTimeRequests.count == 1)
        #expect(harness.lifecycle.openBackgroundTimeRequests == 1)

        await harness.advance(by: 2)  // "a" is up, "b" is out
        #expect(Self.uploadedTypes(harness) == ["a"])
        #expect(harness.lifecycle.openBackgroundTimeRequests == 1)

        await harness.advance(by: 2)
        #expect(Self.uploadedTypes(harness) == ["a", "b"])
        #expect(harness.lifecycle.backgroundTimeRequests == [.init(name: "RealtimeSegments flush", ended: true, expired: false)])
        // Counted, not a flag: the flush's end and the request's release must not both end it.
        await harness.advance(by: 60)
        #expect(harness.lifecycle.backgroundTimeEndCounts == [1], "ended \(harness.lifecycle.backgroundTimeEndCounts) times")
    }

    @Test func e7_theRequestEndsWhenTheFlushFailsToo() async throws {
        let harness = ClientHarness()
        harness.uploader.failNextUploads(1, with: SegmentsError(.httpStatus, "unavailable", httpStatus: 503))
        try harness.configure(flushingMode: .automatic)
        try Self.track(harness, "a")
        harness.lifecycle.post(.didEnterBackground)
        await harness.advance()
        #expect(harness.uploader.attempts.count == 1)
        #expect(harness.uploader.accepted.isEmpty)
        #expect(harness.lifecycle.backgroundTimeRequests.map(\.ended) == [true])
        #expect(harness.client.queuedEventCount == 1)  // kept for the retry (E3)
    }

    @Test func e7_whenTheTimeRunsOutTheRequestEndsOnceAndNothingQueuedIsLost() async throws {
        let harness = ClientHarness()
        harness.uploader.delay = 30
        try harness.configure(flushingMode: .automatic)
        try Self.track(harness, "a", "b")
        harness.lifecycle.post(.didEnterBackground)
        await harness.advance(by: 10)  // "a" is still out
        harness.lifecycle.expireBackgroundTime()
        #expect(harness.lifecycle.backgroundTimeRequests == [.init(name: "RealtimeSegments flush", ended: true, expired: true)])
        #expect(harness.client.queuedEventCount == 2)

        // The flush goes on when the app runs again; its end does not end anything twice, and
        // every item is uploaded.
        await harness.advance(by: 60)
        #expect(Self.uploadedTypes(harness) == ["a", "b"])
        #expect(harness.lifecycle.backgroundTimeRequests.count == 1)
        #expect(harness.client.queuedEventCount == 0)
    }

    @Test func e7_immediateModeJoinsTheFlushInProgressAndAsksDuringARetryBackoff() async throws {
        let harness = ClientHarness()
        harness.uploader.failNextUploads(1, with: SegmentsError(.httpStatus, "unavailable", httpStatus: 503))
        try harness.configure(flushingMode: .immediate)
        try Self.track(harness, "a")
        await harness.advance()
        #expect(harness.uploader.accepted.isEmpty)  // failed: a retry waits (about 2 s)
        harness.lifecycle.post(.didEnterBackground)
        await harness.advance()
        #expect(Self.uploadedTypes(harness) == ["a"])  // uploaded at once, not after the backoff
        #expect(harness.lifecycle.backgroundTimeRequests.map(\.ended) == [true])
    }

    @Test func e7_whileTheStoredQueueLoadsTheFlushWaitsForItAndTheRequestEndsAfter() async throws {
        let harness = ClientHarness()
        harness.storageQueue.suspend()  // the stored queue's load (R3) waits
        try harness.configure(flushingMode: .automatic)
        try Self.track(harness, "a")
        harness.lifecycle.post(.didEnterBackground)
        await harness.scheduler.advance(by: 10)
        #expect(harness.uploader.attempts.isEmpty)
        #expect(harness.lifecycle.openBackgroundTimeRequests == 1)
        harness.storageQueue.resume()
        await harness.advance()
        #expect(Self.uploadedTypes(harness) == ["a"])
        #expect(harness.lifecycle.backgroundTimeRequests.map(\.ended) == [true])
    }

    @Test func e7_nothingQueuedAsksForNoBackgroundTime() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .immediate)
        await harness.advance()  // the stored queue (empty) has loaded
        harness.lifecycle.post(.didEnterBackground)
        await harness.advance()
        #expect(harness.lifecycle.backgroundTimeRequests.isEmpty)
    }

    @Test func e7_aStoppedClientAsksForNoBackgroundTime() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .automatic)
        try Self.track(harness, "a")
        harness.client.stop()
        harness.lifecycle.post(.didEnterBackground)
        await harness.advance()
        #expect(harness.lifecycle.backgroundTimeRequests.isEmpty)
        #expect(harness.uploader.attempts.isEmpty)
    }

    @Test func e7_theClientStopsObservingWhenReleased() async throws {
        let lifecycle = ManualAppLifecycle()
        do {
            var options = SegmentsClient.Options(storage: .inMemory)
            options.appLifecycle = lifecycle
            let client = SegmentsClient(options: options)
            #expect(lifecycle.observerCount == 1)
            _ = client
        }
        #expect(lifecycle.observerCount == 0)
    }

    // MARK: - T11: the foreground refresh

    @Test func t11_returningToTheForegroundReloadsWhenTheLastReloadIsOlderThanTheAge() async throws {
        let harness = ClientHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        try harness.configure()
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.count == 1)
        #expect(told.all == [[Fixture.s1]])

        await harness.advance(by: 61)
        harness.repository.answer([.discovery(): [Fixture.s2]])
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 4.9)
        #expect(harness.repository.fetches.count == 1)  // through the debounce (T5)
        await harness.advance(by: 0.1)
        #expect(harness.repository.fetches.count == 2)
        #expect(told.all == [[Fixture.s1], [Fixture.s2]])
    }

    /// Issue 32 finding 14: a return to the foreground while a configuration's baseline loads was
    /// dropped (no reload then, nor when the load ended: T2 logged "not required").
    @Test func t11_r3_returningToTheForegroundWhileTheBaselineLoadsReloadsOnceItIsIn() async throws {
        let harness = ClientHarness()
        harness.client.addListener(category: .discovery(), includeFirstLoad: false) { _ in }
        harness.storageQueue.suspend()  // the baseline's load (R3) waits
        try harness.configure()
        harness.lifecycle.post(.willEnterForeground)
        await harness.scheduler.advance(by: 10)
        #expect(harness.repository.fetches.isEmpty)
        harness.storageQueue.resume()
        await harness.advance(by: 5)  // through the debounce (T5)
        #expect(harness.repository.fetches.count == 1)
        #expect(harness.logger.count(of: "Segments: Skipping initial segments update process as is not required") == 0)
    }

    /// The return during the load is judged against the loaded baseline: one this process fetched
    /// 30 s before is younger than the age, so nothing is fetched again.
    @Test func t11_r3_aReturnWhileLoadingABaselineFetchedRecentlyByThisProcessIsNotReloaded() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let harness = ClientHarness(storage: FileStores(folder.url).storage)  // one storage: a re-configure keeps it (T2)
        harness.client.addListener(category: .discovery(), includeFirstLoad: false) { _ in }
        try harness.configure()
        try Self.track(harness, "a")  // its upload requests a reload (T3)
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.count == 1)
        await harness.advance(by: 25)
        harness.storageQueue.suspend()
        try harness.configure()  // the same integration and storage: no reload of its own (T2)
        await harness.scheduler.advance(by: 5)
        harness.lifecycle.post(.willEnterForeground)
        harness.storageQueue.resume()
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 1)
    }

    @Test func t11_aReloadYoungerThanTheAgeIsNotRepeated() async throws {
        let harness = ClientHarness()
        try harness.configure()
        harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.count == 1)
        await harness.advance(by: 55)  // 55 s after the reload: younger than 60 s
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 1)
    }

    @Test func t11_withoutListenersNothingIsReloaded() async throws {
        let harness = ClientHarness()
        try harness.configure()
        let token = harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 5)
        harness.client.removeListener(token)
        await harness.advance(by: 120)
        let skipped = harness.logger.count(of: "Segments: Skipping segments reload process for no callback")
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 1)
        // Not even requested: no debounce ran out to find no listener (T7's skip line).
        #expect(harness.logger.count(of: "Segments: Skipping segments reload process for no callback") == skipped)
    }

    @Test func t11_anAgeOfZeroTurnsTheRefreshOff() async throws {
        var timings = SegmentationTimings()
        timings.foregroundRefreshAge = 0
        let harness = ClientHarness(timings: timings)
        try harness.configure()
        harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 5)
        await harness.advance(by: 3600)
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 1)
    }

    @Test func t11_aConfiguredAgeIsUsed() async throws {
        var timings = SegmentationTimings()
        timings.foregroundRefreshAge = 600
        let harness = ClientHarness(timings: timings)
        try harness.configure()
        harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 5)
        await harness.advance(by: 300)
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 1)
        await harness.advance(by: 300)
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 2)
    }

    @Test func t11_foregroundRequestsCoalesceWithOtherRequestsInTheDebounce() async throws {
        let harness = ClientHarness()
        try harness.configure()
        harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 5)
        await harness.advance(by: 120)
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 2)
        harness.lifecycle.post(.willEnterForeground)
        harness.client.addListener(category: .content()) { _ in }  // T1: one more request
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 2)
    }

    @Test func t11_beforeConfigureAndAfterStopNothingIsReloaded() async throws {
        let harness = ClientHarness()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { _ in }
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.isEmpty)
        try harness.configure()
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.count == 1)
        harness.client.stop()
        await harness.advance(by: 120)
        harness.lifecycle.post(.willEnterForeground)
        await harness.advance(by: 30)
        #expect(harness.repository.fetches.count == 1)
    }

    @Test(arguments: [-1, Double.nan, Double.infinity])
    func t11_p7_aNegativeOrNonFiniteAgeIsRefusedAtConfigure(age: Double) async throws {
        var timings = SegmentationTimings()
        timings.foregroundRefreshAge = age
        let harness = ClientHarness(timings: timings)
        let error = #expect(throws: SegmentsError.self) { try harness.configure() }
        #expect(error?.code == .invalidConfiguration)
        #expect(!harness.client.isConfigured)
    }
}
