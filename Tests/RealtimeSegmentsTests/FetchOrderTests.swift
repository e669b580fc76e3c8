import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// A user context keeps the answer of its newest fetch (see Behaviour O1, O2): an older fetch that
/// ends after a newer one never overwrites what the newer one stored, a success or a cleared failure.
@Suite(Hang.timeLimit(minutes: 2)) struct FetchOrderTests {
    /// Starts a fetch whose answer comes `delay` virtual seconds later, and lets it start.
    private func start(
        _ harness: AudienceHarness, _ user: SegmentsUserContext, delay: TimeInterval,
        options: [AudienceSegmentOption], into answers: Recorder<SegmentsError?>
    ) async {
        harness.fetcher.delay = delay
        user.fetchQualifiedSegments(options: options) { answers.record($0) }
        await harness.clock.advance()
        harness.deliveryQueue.sync {}
    }

    @Test func o1_anOlderFetchEndingLateNeverOverwritesANewerAnswer() async throws {
        let harness = AudienceHarness(virtualRequests: true)
        let user = harness.client.createUserContext(userId: "user123")
        let answers = Recorder<SegmentsError?>()
        harness.fetcher.answerNextFetch(with: ["seg-1"])
        await start(harness, user, delay: 10, options: [.ignoreCache], into: answers)
        harness.fetcher.answerNextFetch(with: ["seg-2"])
        await start(harness, user, delay: 0, options: [.ignoreCache], into: answers)
        #expect(harness.fetcher.callCount == 2)
        #expect(user.qualifiedSegments == ["seg-2"])
        await harness.clock.advance(by: 10)
        harness.deliveryQueue.sync {}
        #expect(answers.count == 2)
        #expect(user.qualifiedSegments == ["seg-2"])
    }

    @Test func o2_anOlderFetchEndingLateNeverRefillsWhatANewerFailureCleared() async throws {
        let harness = AudienceHarness(virtualRequests: true)
        let user = harness.client.createUserContext(userId: "user123")
        let answers = Recorder<SegmentsError?>()
        await start(harness, user, delay: 0, options: [], into: answers)
        #expect(user.qualifiedSegments == ["seg-1"])
        harness.fetcher.answerNextFetch(with: ["seg-2"])
        await start(harness, user, delay: 10, options: [.ignoreCache], into: answers)
        harness.fetcher.failNextFetches(1, with: SegmentsError(.network, "down"))
        await start(harness, user, delay: 0, options: [.ignoreCache, .clearOnFailure], into: answers)
        #expect(harness.fetcher.callCount == 3)
        #expect(user.qualifiedSegments == nil)
        await harness.clock.advance(by: 10)
        harness.deliveryQueue.sync {}
        #expect(answers.count == 3)
        #expect(user.qualifiedSegments == nil)
    }
}
