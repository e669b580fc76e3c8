import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The time-out of blocking calls expected to succeed.
private let patience = AudienceHarness.generous

/// The user context API over a recording backend: the three fetch forms, options, cache and errors
/// (see Behaviour O1–O4).
@Suite(Hang.timeLimit(minutes: 2)) struct UserContextTests {
    @Test func o1_theAsyncFormFetchesAndStoresTheQualifiedSegments() async throws {
        let harness = AudienceHarness()
        harness.fetcher.answer(["seg-2", "seg-1", "not-a-candidate"])
        let user = harness.client.createUserContext(userId: "user123")
        #expect(user.qualifiedSegments == nil)
        #expect(!user.isQualifiedFor(segment: "seg-1"))
        #expect(try await user.fetchQualifiedSegments() == ["seg-2", "seg-1"])
        #expect(user.qualifiedSegments == ["seg-2", "seg-1"])
        #expect(user.isQualifiedFor(segment: "seg-1"))
        #expect(!user.isQualifiedFor(segment: "seg-3"))
        #expect(harness.fetcher.calls == [.init(identifier: AudienceIdentifier(field: .fsUserId, value: "user123"),
                                                candidates: AudienceHarness.candidates)])
    }

    @Test func o1_theAsyncFormHonoursIgnoreCache() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        try await user.fetchQualifiedSegments()
        harness.fetcher.answer(["seg-3"])
        #expect(try await user.fetchQualifiedSegments() == ["seg-1"])
        #expect(harness.fetcher.callCount == 1)
        #expect(try await user.fetchQualifiedSegments(options: [.ignoreCache]) == ["seg-3"])
        #expect(harness.fetcher.callCount == 2)
        #expect(user.qualifiedSegments == ["seg-3"])
        #expect(try await user.fetchQualifiedSegments() == ["seg-1"], "the ignored answer was not cached")
    }

    @Test func o1_theCompletionFormForwardsOptionsAndAnswersOnTheDeliveryQueue() async {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        let first = await completionAnswer(user)
        #expect(first.error == nil && first.onDeliveryQueue)
        #expect(user.qualifiedSegments == ["seg-1"])
        harness.fetcher.answer(["seg-2"])
        _ = await completionAnswer(user)
        #expect(harness.fetcher.callCount == 1)
        let ignoring = await completionAnswer(user, options: [.ignoreCache])
        #expect(ignoring.error == nil)
        #expect(harness.fetcher.callCount == 2)
        #expect(user.qualifiedSegments == ["seg-2"])
        harness.fetcher.failNextFetches(with: SegmentsError(.invalidIdentifier, "unknown"))
        let failed = await completionAnswer(user, options: [.resetCache])
        #expect(failed.error?.code == .invalidIdentifier && failed.onDeliveryQueue)
    }

    @Test func o1_theBlockingFormForwardsOptionsAndReturnsTheAnswer() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        #expect(try await onBackgroundThread { try user.fetchQualifiedSegments(timeout: patience) } == ["seg-1"])
        harness.fetcher.answer(["seg-2"])
        #expect(try await onBackgroundThread { try user.fetchQualifiedSegments(timeout: patience) } == ["seg-1"])
        #expect(harness.fetcher.callCount == 1)
        #expect(try await onBackgroundThread { try user.fetchQualifiedSegments(options: [.ignoreCache], timeout: patience) } == ["seg-2"])
        #expect(harness.fetcher.callCount == 2)
        #expect(user.qualifiedSegments == ["seg-2"])
    }

    /// Issue 14, item 3: the recording fetcher sees the options, so "options are forwarded" is
    /// one assertion per form.
    @Test func o1_everyFormForwardsItsOptionsToTheFetcher() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        try await user.fetchQualifiedSegments(options: [.ignoreCache])
        #expect(harness.fetcher.calls.last?.options == [.ignoreCache])
        _ = await completionAnswer(user, options: [.ignoreCache, .clearOnFailure])
        #expect(harness.fetcher.calls.last?.options == [.ignoreCache, .clearOnFailure])
        _ = try await onBackgroundThread { try user.fetchQualifiedSegments(options: [.resetCache], timeout: patience) }
        #expect(harness.fetcher.calls.last?.options == [.resetCache])
        #expect(harness.fetcher.calls.map(\.options) == [[.ignoreCache], [.ignoreCache, .clearOnFailure], [.resetCache]])
    }

    @Test func o1_theBlockingFormTimesOutAndTheFetchStillLandsLater() async throws {
        let harness = AudienceHarness(virtualRequests: true)
        let user = harness.client.createUserContext(userId: "user123")
        let error = await thrownSegmentsError { _ = try await onBackgroundThread { try user.fetchQualifiedSegments(timeout: 0.05) } }
        #expect(error?.code == .timeout)
        #expect(user.qualifiedSegments == nil)
        await harness.clock.advance()
        #expect(user.qualifiedSegments == ["seg-1"])
    }

    @Test func o1_theBlockingFormOnTheDeliveryQueueDoesNotDeadlock() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        let answer: Result<[String], any Error> = await withCheckedContinuation { continuation in
            // A completion handler (on the delivery queue) that makes a blocking call.
            user.fetchQualifiedSegments(options: [.ignoreCache]) { _ in
                continuation.resume(returning: Result { try user.fetchQualifiedSegments(options: [.ignoreCache], timeout: patience) })
            }
        }
        #expect(try answer.get() == ["seg-1"])
        #expect(harness.fetcher.callCount == 2)
    }

    @Test func o1_theBlockingFormAnswersACacheHitEvenWithAZeroTimeout() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        try await user.fetchQualifiedSegments()
        #expect(try await onBackgroundThread { try user.fetchQualifiedSegments(timeout: 0) } == ["seg-1"])
    }

    @Test func o1_qualifiedSegmentsIsSettableForTests() {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        user.qualifiedSegments = ["manual"]
        #expect(user.isQualifiedFor(segment: "manual"))
        user.qualifiedSegments = nil
        #expect(!user.isQualifiedFor(segment: "manual"))
        #expect(harness.fetcher.callCount == 0)
    }

    /// `isQualifiedFor` answers from a set built when the list is stored: after every change of
    /// the list — a fetch, a later fetch, the setter, a cleared failure — it agrees with
    /// `qualifiedSegments` for every name, never with an earlier list.
    @Test func o1_isQualifiedForAgreesWithTheListStoredLast() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        let names = AudienceHarness.candidates + ["manual", "other", ""]
        func agrees(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
            for name in names {
                #expect(
                    user.isQualifiedFor(segment: name) == (user.qualifiedSegments?.contains(name) ?? false),
                    "\(step): \(name)", sourceLocation: sourceLocation)
            }
        }
        agrees("before any fetch")
        harness.fetcher.answer(["seg-2", "seg-1"])
        #expect(try await user.fetchQualifiedSegments() == ["seg-2", "seg-1"])
        agrees("first fetch")
        harness.fetcher.answer(["seg-3"])
        #expect(try await user.fetchQualifiedSegments(options: [.ignoreCache]) == ["seg-3"])
        #expect(!user.isQualifiedFor(segment: "seg-1"), "no longer qualified")
        agrees("second fetch")
        user.qualifiedSegments = ["manual", "seg-1", "manual"]
        #expect(user.isQualifiedFor(segment: "manual"))
        agrees("set")
        user.qualifiedSegments = []
        agrees("set empty")
        user.qualifiedSegments = ["other"]
        harness.fetcher.failNextFetches(1, with: SegmentsError(.httpStatus, "down", httpStatus: 503))
        _ = await thrownSegmentsError { try await user.fetchQualifiedSegments(options: [.ignoreCache, .clearOnFailure]) }
        #expect(user.qualifiedSegments == nil)
        #expect(!user.isQualifiedFor(segment: "other"))
        agrees("cleared by a failure")
    }

    @Test func o1_aFailedFetchKeepsThePreviousListUnlessAskedOtherwise() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        try await user.fetchQualifiedSegments()
        harness.fetcher.failNextFetches(2, with: SegmentsError(.httpStatus, "down", httpStatus: 503))
        let kept = await thrownSegmentsError { try await user.fetchQualifiedSegments(options: [.ignoreCache]) }
        #expect(kept?.httpStatus == 503)
        #expect(user.qualifiedSegments == ["seg-1"])
        let cleared = await thrownSegmentsError { try await user.fetchQualifiedSegments(options: [.ignoreCache, .clearOnFailure]) }
        #expect(cleared?.code == .httpStatus)
        #expect(user.qualifiedSegments == nil)
    }

    @Test func o2_resetCacheClearsEveryUser() async throws {
        let harness = AudienceHarness()
        let jane = harness.client.createUserContext(userId: "jane")
        let joe = harness.client.createUserContext(userId: "joe")
        try await jane.fetchQualifiedSegments()
        try await joe.fetchQualifiedSegments()
        try await jane.fetchQualifiedSegments(options: [.resetCache])
        #expect(harness.fetcher.callCount == 3)
        try await joe.fetchQualifiedSegments()
        try await jane.fetchQualifiedSegments()
        #expect(harness.fetcher.callCount == 4)
        harness.client.resetCache()
        try await jane.fetchQualifiedSegments()
        #expect(harness.fetcher.callCount == 5)
    }

    @Test func o2_resetAndIgnoreCacheTogether() async throws {
        let harness = AudienceHarness()
        let jane = harness.client.createUserContext(userId: "jane")
        let joe = harness.client.createUserContext(userId: "joe")
        try await jane.fetchQualifiedSegments()
        try await joe.fetchQualifiedSegments()
        try await jane.fetchQualifiedSegments(options: [.resetCache, .ignoreCache])
        try await jane.fetchQualifiedSegments()
        try await joe.fetchQualifiedSegments()
        #expect(harness.fetcher.callCount == 5)
    }

    @Test func o3_contextsOfOneUserShareTheCacheAndOneRequest() async throws {
        let harness = AudienceHarness(virtualRequests: true)
        harness.fetcher.delay = 1
        let contexts = (0..<5).map { _ in harness.client.createUserContext(userId: "user123") }
        let answers = Recorder<SegmentsError?>()
        for context in contexts { context.fetchQualifiedSegments { answers.record($0) } }
        await harness.clock.advance(by: 1)
        await drained(harness.deliveryQueue)
        #expect(harness.fetcher.callCount == 1)
        #expect(answers.count == 5 && answers.all.allSatisfy { $0 == nil })
        #expect(contexts.allSatisfy { $0.qualifiedSegments == ["seg-1"] })
        let later = harness.client.createUserContext(userId: "user123")
        later.fetchQualifiedSegments { answers.record($0) }
        await drained(harness.deliveryQueue)
        #expect(answers.count == 6)
        #expect(harness.fetcher.callCount == 1)
    }

    @Test func o3_ttlExpiryOnVirtualTime() async throws {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        try await user.fetchQualifiedSegments()
        await harness.clock.advance(by: 599)
        try await user.fetchQualifiedSegments()
        #expect(harness.fetcher.callCount == 1)
        await harness.clock.advance(by: 1)
        try await user.fetchQualifiedSegments()
        #expect(harness.fetcher.callCount == 2)
    }

    @Test func o3_theVuidRuleDecidesTheIdentifierType() async throws {
        let harness = AudienceHarness()
        try await harness.client.createUserContext(userId: "VUID_abc").fetchQualifiedSegments()
        try await harness.client.createUserContext(userId: "abc").fetchQualifiedSegments()
        #expect(harness.fetcher.calls.map(\.identifier.field) == [.vuid, .fsUserId])
    }

    /// Issue 14, item 7: the key type can be given explicitly, as Optimizely's `userKey`.
    @Test func o3_theIdentifierTypeCanBeGivenExplicitly() async throws {
        let harness = AudienceHarness()
        let visitor = harness.client.createUserContext(userId: "3d9e-anonymous", identifierField: .vuid)
        let user = harness.client.createUserContext(userId: "vuid_looks_anonymous", identifierField: .fsUserId)
        #expect(visitor.identifier == AudienceIdentifier(field: .vuid, value: "3d9e-anonymous"))
        try await visitor.fetchQualifiedSegments()
        try await user.fetchQualifiedSegments()
        #expect(harness.fetcher.calls.map(\.identifier) == [
            AudienceIdentifier(field: .vuid, value: "3d9e-anonymous"),
            AudienceIdentifier(field: .fsUserId, value: "vuid_looks_anonymous"),
        ])
        try await harness.client.createUserContext(userId: "3d9e-anonymous").fetchQualifiedSegments()
        #expect(harness.fetcher.callCount == 3, "the cache is keyed by type and value: fs_user_id 3d9e… is another user")
    }

    @Test func o4_noCandidatesAnswerEmptyWithoutARequest() async throws {
        let harness = AudienceHarness(candidates: [])
        let user = harness.client.createUserContext(userId: "user123")
        #expect(try await user.fetchQualifiedSegments() == [])
        #expect(user.qualifiedSegments == [])
        #expect(harness.fetcher.callCount == 0)
    }

    @Test func o4_withoutAnAudienceBackendEveryFormFailsWithNotEnabled() async throws {
        let harness = AudienceHarness(enabled: false)
        let user = harness.client.createUserContext(userId: "user123")
        #expect(!harness.client.isEnabled)
        #expect(await thrownSegmentsError { try await user.fetchQualifiedSegments() }?.code == .notEnabled)
        #expect(await completionAnswer(user).error?.code == .notEnabled)
        let blocking = await thrownSegmentsError { _ = try await onBackgroundThread { try user.fetchQualifiedSegments(timeout: 1) } }
        #expect(blocking?.code == .notEnabled)
    }

    /// Issue 14, defect 1: without an audience backend the early `.notEnabled` answer skipped
    /// `.clearOnFailure`, in all three forms.
    @Test func o4_notEnabledHonoursClearOnFailureInEveryForm() async throws {
        let harness = AudienceHarness(enabled: false)
        let user = harness.client.createUserContext(userId: "user123")

        user.qualifiedSegments = ["stale"]
        let kept = await thrownSegmentsError { try await user.fetchQualifiedSegments() }
        #expect(kept?.code == .notEnabled)
        #expect(user.qualifiedSegments == ["stale"], "without .clearOnFailure the list stays")

        let async = await thrownSegmentsError { try await user.fetchQualifiedSegments(options: [.clearOnFailure]) }
        #expect(async?.code == .notEnabled)
        #expect(user.qualifiedSegments == nil, "async form")

        user.qualifiedSegments = ["stale"]
        let completion = await completionAnswer(user, options: [.clearOnFailure])
        #expect(completion.error?.code == .notEnabled && completion.onDeliveryQueue)
        #expect(user.qualifiedSegments == nil, "completion form")

        user.qualifiedSegments = ["stale"]
        let blocking = await thrownSegmentsError {
            _ = try await onBackgroundThread { try user.fetchQualifiedSegments(options: [.clearOnFailure], timeout: patience) }
        }
        #expect(blocking?.code == .notEnabled)
        #expect(user.qualifiedSegments == nil, "blocking form")
    }

    @Test func o4_theBackendsErrorsReachTheCaller() async {
        let harness = AudienceHarness()
        let user = harness.client.createUserContext(userId: "user123")
        harness.fetcher.failNextFetches(with: SegmentsError(.invalidIdentifier, "unknown user"))
        #expect(await thrownSegmentsError { try await user.fetchQualifiedSegments() }?.code == .invalidIdentifier)
        #expect(harness.logger.messages.contains { $0.hasPrefix("Segments: Fetch of qualified segments failed:") })
    }

    /// Issue 14, item 8: tests are safe by default with `Options.testing`.
    @Test func o1_optionsTestingTouchesNeitherTheDiskNorTheNetwork() async throws {
        let options = AudienceSegmentsClient.Options.testing
        guard case .inMemory = options.visitorStorage else {
            Issue.record("visitor segments must stay in memory")
            return
        }
        let audiences = try AudienceSegmentsClient(
            odp: ODPConfiguration(apiKey: "public-key"), candidateSegments: ["seg-1"], options: .testing)
        let user = audiences.createUserContext(userId: "user123")
        let error = await thrownSegmentsError { try await user.fetchQualifiedSegments() }
        #expect(error?.code == .network)
        #expect(error?.message.contains("Options.testing sends no request") == true)
        user.setCustomSegments(["kept-in-memory"])
        #expect(user.visitorSegments.customSegments == ["kept-in-memory"])
    }

    @Test(arguments: ["", "nope", "http://odp.example.com", "https://"])
    func o4_aBadODPHostIsAnErrorAtConstructionNeverACrash(host: String) {
        let error = #expect(throws: SegmentsError.self) {
            try AudienceSegmentsClient(
                odp: ODPConfiguration(apiKey: "k", apiHost: host), candidateSegments: ["a"],
                options: .init(visitorStorage: .inMemory))
        }
        #expect(error?.code == .invalidConfiguration)
    }
}
