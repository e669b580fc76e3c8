import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// The cache and request sharing of qualified audience segments, on virtual time (see Behaviour O2–O4).
@Suite(Hang.timeLimit(minutes: 2)) struct QualifiedSegmentsLoaderTests {
    typealias Answer = Result<[String], SegmentsError>

    static let candidates = ["seg-1", "seg-2", "seg-3"]
    static let user = AudienceIdentifier(userId: "user123")

    let scheduler = TestScheduler()
    let logger = RecordingLogger()
    let fetcher: RecordingAudienceSegmentFetcher
    let loader: QualifiedSegmentsLoader

    init() {
        fetcher = RecordingAudienceSegmentFetcher(scheduler: scheduler)
        fetcher.answer(["seg-1"])
        loader = QualifiedSegmentsLoader(fetcher: fetcher, scheduler: scheduler, clock: scheduler, logger: logger)
    }

    /// Starts a load and returns where its answer will be recorded.
    func start(
        _ identifier: AudienceIdentifier = user, _ options: Set<AudienceSegmentOption> = [],
        candidates: [String] = candidates
    ) -> Recorder<Answer> {
        let answers = Recorder<Answer>()
        loader.qualifiedSegments(for: identifier, candidates: candidates, options: options) { answers.record($0) }
        return answers
    }

    /// Loads and lets virtual time run until the answer is there.
    @discardableResult
    func load(
        _ identifier: AudienceIdentifier = user, _ options: Set<AudienceSegmentOption> = []
    ) async -> Answer? {
        let answers = start(identifier, options)
        await scheduler.advance(by: fetcher.delay)
        #expect(answers.count == 1)
        return answers.last
    }

    @Test func o3_aSecondFetchForAUserIsAnsweredFromTheCache() async throws {
        #expect(try await load()?.get() == ["seg-1"])
        fetcher.answer(["seg-2"])
        #expect(try await load()?.get() == ["seg-1"])
        #expect(fetcher.callCount == 1)
        #expect(loader.isCached(Self.user))
    }

    @Test func o3_theCacheIsKeyedByIdentifierTypeAndValue() async {
        await load(AudienceIdentifier(field: .fsUserId, value: "x"))
        await load(AudienceIdentifier(field: .vuid, value: "x"))
        await load(AudienceIdentifier(field: .fsUserId, value: "y"))
        await load(AudienceIdentifier(field: .fsUserId, value: "x"))
        #expect(fetcher.callCount == 3)
    }

    @Test func o3_ttlExpiryOnVirtualTime() async {
        await load()
        await scheduler.advance(by: 599.9)
        await load()
        #expect(fetcher.callCount == 1)
        await scheduler.advance(by: 0.1)
        #expect(!loader.isCached(Self.user))
        await load()
        #expect(fetcher.callCount == 2)
    }

    @Test func o3_cacheHoldsOnly100Users() async {
        for index in 0...100 { await load(AudienceIdentifier(userId: "user-\(index)")) }
        #expect(fetcher.callCount == 101)
        #expect(!loader.isCached(AudienceIdentifier(userId: "user-0")))
        #expect((1...100).allSatisfy { loader.isCached(AudienceIdentifier(userId: "user-\($0)")) })
        await load(AudienceIdentifier(userId: "user-0"))
        #expect(fetcher.callCount == 102)
    }

    @Test func o3_cacheSizeAndTimeoutAreConfigurable() async {
        let small = QualifiedSegmentsLoader(
            fetcher: fetcher, scheduler: scheduler, clock: scheduler, logger: logger, cacheCapacity: 1, cacheTimeout: 5)
        for userId in ["a", "b", "a"] {
            small.qualifiedSegments(for: AudienceIdentifier(userId: userId), candidates: Self.candidates) { _ in }
            await scheduler.advance()
        }
        #expect(fetcher.callCount == 3)
        await scheduler.advance(by: 5)
        #expect(!small.isCached(AudienceIdentifier(userId: "a")))
    }

    @Test func o3_onlySuccessesAreCached() async throws {
        fetcher.failNextFetches(with: SegmentsError(.httpStatus, "down", httpStatus: 503))
        #expect(await load().map { (try? $0.get()) == nil } == true)
        #expect(!loader.isCached(Self.user))
        #expect(try await load()?.get() == ["seg-1"])
        #expect(fetcher.callCount == 2)
        #expect(logger.messages.contains { $0.hasPrefix("Segments: Fetch of qualified segments failed:") })
    }

    @Test func o2_ignoreCacheNeitherReadsNorWritesTheCache() async throws {
        await load()
        fetcher.answer(["seg-2"])
        #expect(try await load(Self.user, [.ignoreCache])?.get() == ["seg-2"])
        #expect(fetcher.callCount == 2)
        #expect(try await load()?.get() == ["seg-1"])
        let other = AudienceIdentifier(userId: "other")
        await load(other, [.ignoreCache])
        #expect(!loader.isCached(other))
    }

    @Test func o2_resetCacheClearsEveryUser() async {
        let other = AudienceIdentifier(userId: "other")
        await load()
        await load(other)
        await load(Self.user, [.resetCache])
        #expect(fetcher.callCount == 3)
        #expect(loader.isCached(Self.user))
        #expect(!loader.isCached(other))
        await load(other)
        #expect(fetcher.callCount == 4)
    }

    @Test func o2_resetCacheAndIgnoreCacheTogetherClearAndStoreNothing() async {
        let other = AudienceIdentifier(userId: "other")
        await load()
        await load(other)
        await load(Self.user, [.resetCache, .ignoreCache])
        #expect(fetcher.callCount == 3)
        #expect(!loader.isCached(Self.user))
        #expect(!loader.isCached(other))
    }

    @Test func o2_resetCacheIsAlsoAMethod() async {
        await load()
        loader.resetCache()
        #expect(!loader.isCached(Self.user))
    }

    @Test func o3_concurrentFetchesForOneUserShareOneRequest() async {
        fetcher.delay = 1
        let answers = (0..<10).map { _ in start() }
        let other = start(AudienceIdentifier(userId: "other"))
        await scheduler.advance(by: 1)
        #expect(fetcher.callCount == 2)
        #expect(answers.allSatisfy { (try? $0.last?.get()) == ["seg-1"] && $0.count == 1 })
        #expect(other.count == 1)
    }

    @Test func o3_aSharedFailureReachesEveryWaiterAndIsNotCached() async {
        fetcher.delay = 1
        fetcher.failNextFetches(with: SegmentsError(.invalidIdentifier, "unknown user"))
        let answers = (0..<3).map { _ in start() }
        await scheduler.advance(by: 1)
        #expect(answers.allSatisfy { answer in
            if case .failure(let error)? = answer.last { return error.code == .invalidIdentifier }
            return false
        })
        #expect(!loader.isCached(Self.user))
        #expect(fetcher.callCount == 1)
    }

    @Test func o2_ignoreCacheDoesNotJoinASharedRequest() async throws {
        fetcher.delay = 1
        fetcher.answerNextFetch(with: ["seg-1"])
        fetcher.answerNextFetch(with: ["seg-3"])
        let shared = start()
        let own = start(Self.user, [.ignoreCache])
        await scheduler.advance(by: 1)
        #expect(fetcher.callCount == 2)
        #expect(try shared.last?.get() == ["seg-1"])
        #expect(try own.last?.get() == ["seg-3"])
    }

    @Test func o1_theFetcherIsToldTheOptionsOfTheLoadThatSentTheRequest() async throws {
        fetcher.delay = 1
        _ = start(Self.user, [.clearOnFailure])
        _ = start(Self.user, [.resetCache])  // resets, then starts its own request
        _ = start()  // joins the second request: no call of its own
        _ = start(Self.user, [.ignoreCache, .clearOnFailure])
        await scheduler.advance(by: 1)
        #expect(fetcher.calls.map(\.options) == [[.clearOnFailure], [.resetCache], [.ignoreCache, .clearOnFailure]])
    }

    @Test func t10_o3_settingTheWallClockNeitherExpiresNorKeepsACachedAnswer() async throws {
        await load()
        scheduler.moveWallClock(by: 3600)  // an hour forward: not 600 s of cache age
        await load()
        scheduler.moveWallClock(by: -7200)  // and back: not "stored in the future"
        await load()
        #expect(fetcher.callCount == 1)
        await scheduler.advance(by: 600)  // 600 s really pass
        await load()
        #expect(fetcher.callCount == 2)
    }

    @Test func o2_anAnswerThatStartedBeforeAResetStaysOutOfTheCache() async throws {
        fetcher.delay = 1
        let early = start()
        loader.resetCache()
        await scheduler.advance(by: 1)
        #expect(try early.last?.get() == ["seg-1"])
        #expect(!loader.isCached(Self.user))
    }

    /// The `.resetCache` option, not only the method: a request that started before it answers
    /// its caller but never fills the emptied cache.
    @Test func o2_theResetCacheOptionKeepsAnEarlierRequestOutOfTheCache() async throws {
        fetcher.delay = 1
        let other = AudienceIdentifier(userId: "other")
        let early = start()
        await scheduler.advance(by: 0.5)
        let reset = start(other, [.resetCache])
        await scheduler.advance(by: 0.5)  // the early request lands after the reset
        #expect(try early.last?.get() == ["seg-1"])
        #expect(!loader.isCached(Self.user))
        await scheduler.advance(by: 0.5)
        #expect(try reset.last?.get() == ["seg-1"])
        #expect(loader.isCached(other))
    }

    /// A load with `.resetCache` never joins a request that started before the reset: it sends
    /// its own, and only its answer is cached.
    @Test func o2_aLoadWithResetCacheSendsItsOwnRequest() async throws {
        fetcher.delay = 1
        let early = start()
        let reset = start(Self.user, [.resetCache])
        await scheduler.advance(by: 1)
        #expect(fetcher.callCount == 2)
        #expect(early.count == 1 && reset.count == 1)
        #expect(loader.isCached(Self.user))
        fetcher.answer(["seg-3"])
        #expect(try await load()?.get() == (try reset.last?.get()))
        #expect(fetcher.callCount == 2)
    }

    @Test func o4_noCandidatesAnswerEmptyWithoutARequest() async throws {
        let answers = start(Self.user, [], candidates: [])
        #expect(try answers.last?.get() == [])
        #expect(scheduler.pendingWorkCount == 0)
        #expect(fetcher.callCount == 0)
    }

    @Test func o1_theAsyncFormAnswersLikeTheCompletionForm() async throws {
        let task = Task { try await loader.qualifiedSegments(for: Self.user, candidates: Self.candidates) }
        while scheduler.pendingWorkCount == 0 { await Task.yield() }
        await scheduler.advance()
        #expect(try await task.value == ["seg-1"])
        #expect(try await loader.qualifiedSegments(for: Self.user, candidates: Self.candidates) == ["seg-1"])
        #expect(fetcher.callCount == 1)
    }
}
