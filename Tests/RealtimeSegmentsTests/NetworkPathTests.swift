import Foundation
import RealtimeSegments
import SegmentsDomain
import SegmentsTesting
import Testing

/// The network path through `ManualNetworkPath`, on virtual time (Behaviour N1–N3): offline nothing
/// is sent, no retry is counted and no backoff grows, a read that needs the network fails at once,
/// listeners keep what they were told; when the path returns the queue is flushed, a backoff is cut
/// short, and stale listeners get a reload.
@Suite(Hang.timeLimit(minutes: 2)) struct NetworkPathTests {
    static let unavailable = SegmentsError(.httpStatus, "unavailable", httpStatus: 503)
    static let connectionLost = SegmentsError(.network, "connection lost")

    private static func track(_ harness: ClientHarness, _ types: [String]) throws {
        for type in types { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
    }

    private static func types(_ events: [TrackedEvent]) -> [String] {
        events.map { if case .event(let type) = $0.kind { type } else { "customer" } }
    }

    /// A configured harness whose queue and baseline are loaded.
    private static func configured(_ mode: FlushingMode = .immediate) async throws -> ClientHarness {
        let harness = ClientHarness()
        try harness.configure(flushingMode: mode)
        await harness.advance()
        return harness
    }

    // MARK: - N1: offline

    @Test func n1_offlineNoUploadStartsAndNoRetryIsCounted() async throws {
        let harness = try await Self.configured()
        harness.networkPath.goOffline()
        try Self.track(harness, ["a", "b", "c"])
        await harness.advance(by: 3600)
        #expect(harness.uploader.attempts.isEmpty, "nothing is sent while offline")
        #expect(harness.client.queuedEventCount == 3)
        let flushed = await harness.client.flush()
        guard case .failure(let error) = flushed else { Issue.record("a flush offline succeeded: \(flushed)"); return }
        #expect(error.reason == .offline)
        #expect(harness.uploader.attempts.isEmpty)
    }

    @Test func n1_anUploadThatFailsAsThePathGoesAwayGrowsNoBackoff() async throws {
        let harness = try await Self.configured()
        harness.uploader.delay = 1
        harness.uploader.failNextUploads(1, with: Self.connectionLost)
        try Self.track(harness, ["a"])  // out for upload
        harness.networkPath.goOffline()
        await harness.advance(by: 1)  // it fails
        await harness.advance(by: 3600)
        #expect(harness.uploader.attempts.count == 1, "no retry while offline")
        // Back online, the item goes at once: no backoff was counted for it (one would wait 2 s).
        harness.networkPath.goOnline()
        await harness.advance(by: 1)
        #expect(Self.types(harness.uploader.accepted) == ["a"])
    }

    @Test func n1_aReadThatNeedsTheNetworkFailsAtOnceWithTheOfflineReason() async throws {
        let harness = try await Self.configured()
        harness.networkPath.goOffline()
        let fetchesBefore = harness.repository.fetches.count
        await #expect {
            try await harness.client.getSegments(force: true, category: .discovery())
        } throws: { error in
            (error as? SegmentsError)?.reason == .offline
        }
        // The completion form (as Exponea's) answers [] at once.
        let answered = Recorder<[Segment]>()
        Exponea(client: harness.client).getSegments(force: true, category: .discovery()) { answered.record($0) }
        await drained(harness.deliveryQueue)
        #expect(answered.all == [[]])
        #expect(harness.repository.fetches.count == fetchesBefore, "no request was sent")
    }

    @Test func n1_g1_aReadTheCacheAnswersIsStillAnsweredOffline() async throws {
        let harness = try await Self.configured()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { _ in }
        await harness.advance(by: 5)  // fetched now: the cache answers for 5 s
        #expect(harness.repository.fetches.count == 1)
        harness.networkPath.goOffline()
        await harness.advance(by: 1)
        #expect(try await harness.client.getSegments(category: .discovery()) == [Fixture.s1])
    }

    @Test func n1_listenersKeepWhatTheyWereToldAndNoReloadStartsOffline() async throws {
        let harness = try await Self.configured()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        await harness.advance(by: 5)
        #expect(told.all == [[Fixture.s1]])
        let fetches = harness.repository.fetches.count
        harness.networkPath.goOffline()
        harness.repository.answer([.discovery(): [Fixture.s2]])
        harness.client.addListener(category: .content()) { _ in }  // T1: a reload is requested
        try Self.track(harness, ["a"])
        await harness.advance(by: 3600)
        #expect(told.all == [[Fixture.s1]], "no change is delivered offline")
        #expect(harness.repository.fetches.count == fetches, "no segment request starts offline")
    }

    // MARK: - N2: the path returns

    @Test func n2_thePathsReturnFlushesEveryItemInOrder() async throws {
        let harness = try await Self.configured()
        harness.networkPath.goOffline()
        let names = (1...20).map { "e\($0)" }
        try Self.track(harness, names)
        await harness.advance(by: 600)
        #expect(harness.uploader.attempts.isEmpty)
        harness.networkPath.goOnline()
        await harness.advance()
        #expect(Self.types(harness.uploader.accepted) == names, "nothing lost, in order")
        #expect(harness.client.queuedEventCount == 0)
    }

    @Test(arguments: [FlushingMode.automatic, .periodic(seconds: 3600)])
    func n2_thePathsReturnFlushesInEveryModeButManual(mode: FlushingMode) async throws {
        let harness = try await Self.configured(mode)
        harness.networkPath.goOffline()
        try Self.track(harness, ["a"])
        harness.networkPath.goOnline()
        await harness.advance()
        #expect(Self.types(harness.uploader.accepted) == ["a"])
    }

    @Test func n2_inManualModeThePathsReturnUploadsNothing() async throws {
        let harness = try await Self.configured(.manual)
        harness.networkPath.goOffline()
        try Self.track(harness, ["a"])
        harness.networkPath.goOnline()
        await harness.advance(by: 60)
        #expect(harness.uploader.attempts.isEmpty)
        #expect(harness.client.queuedEventCount == 1)
    }

    @Test func n2_thePathsReturnCutsAnUploadBackoffShort() async throws {
        let harness = try await Self.configured()
        harness.uploader.failNextUploads(3, with: Self.unavailable)
        try Self.track(harness, ["a"])
        // Backoffs of about 2, 4, 8 s (jitter up to 20 %).
        await harness.advance()  // fails: about 2 s
        await harness.advance(by: 3)  // fails: about 4 s
        await harness.advance(by: 5)  // fails: about 8 s
        #expect(harness.uploader.attempts.count == 3)
        harness.networkPath.goOffline()
        harness.networkPath.goOnline()
        await harness.advance()  // no waiting out the 8 s
        #expect(Self.types(harness.uploader.accepted) == ["a"])
    }

    @Test func n2_thePathsReturnCutsAReloadBackoffShortAndTellsListeners() async throws {
        let harness = try await Self.configured()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.repository.failNextFetches(3, with: Self.unavailable)
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        await harness.advance(by: 5)  // the debounce, then fails: about 2 s (jitter up to 20 %)
        await harness.advance(by: 3)  // fails: about 4 s
        await harness.advance(by: 5)  // fails: about 8 s
        #expect(harness.repository.fetches.count == 3)
        #expect(told.all.isEmpty)
        harness.networkPath.goOffline()
        await harness.advance(by: 30)  // the backoff fires offline: no attempt
        #expect(harness.repository.fetches.count == 3)
        harness.networkPath.goOnline()
        await harness.advance()
        #expect(harness.repository.fetches.count == 4)
        #expect(told.all == [[Fixture.s1]])
    }

    @Test(arguments: [(20.0, false), (120.0, true)])
    func n2_t11_thePathsReturnReloadsWhenSegmentsAreOlderThanTheRefreshAge(offlineFor: TimeInterval, reloads: Bool) async throws {
        let harness = try await Self.configured()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        await harness.advance(by: 5)
        let fetches = harness.repository.fetches.count
        harness.networkPath.goOffline()
        harness.repository.answer([.discovery(): [Fixture.s2]])
        await harness.advance(by: offlineFor)
        harness.networkPath.goOnline()
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.count == fetches + (reloads ? 1 : 0))
        #expect(told.all == (reloads ? [[Fixture.s1], [Fixture.s2]] : [[Fixture.s1]]))
    }

    // MARK: - N3: the port

    @Test func n3_x3_aPathChosenInTheSharedOptionsBeforeFirstUseIsTheSharedInstancesPort() async throws {
        let path = ManualNetworkPath(.unusable)
        let logger = RecordingLogger()
        let scheduler = TestScheduler()
        let storageQueue = DispatchQueue(label: "network-path-tests.storage")
        let choice = ChosenUntilFirstUse(SegmentsClient.Options(), logger: logger, lateChoice: "late")
        #expect(choice.update { options in
            options.runtime = SegmentsRuntime(scheduler: scheduler, clock: scheduler)
            options.storage = .inMemory
            options.storageQueue = storageQueue
            options.networkPath = path
        })
        let shared = Exponea.makeShared(logger: logger, options: choice)
        defer { shared.client.stop() }
        #expect(path.observerCount == 1)
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        try shared.client.configure(.init(backend: .custom(id: "test", repository: repository, uploader: RecordingEventUploader())))
        await drained(storageQueue)
        await scheduler.advance(by: 0)
        await #expect {
            try await shared.getSegments(force: true, category: .discovery())
        } throws: { error in
            (error as? SegmentsError)?.reason == .offline
        }
        #expect(repository.fetches.isEmpty)
    }

    @Test func n3_theClientObservesThePathForItsLife() async throws {
        let path = ManualNetworkPath(.unusable)
        var options = SegmentsClient.Options(runtime: SegmentsRuntime(scheduler: TestScheduler()), storage: .inMemory)
        options.networkPath = path
        var client: SegmentsClient? = SegmentsClient(options: options)
        #expect(path.observerCount == 1)
        #expect(client?.isConfigured == false)
        client = nil
        #expect(path.observerCount == 0)
    }
}
