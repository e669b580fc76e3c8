import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// Edges of the pure policies that the table-driven cases in PolicyTests leave out.
@Suite(Hang.timeLimit(minutes: 1)) struct PolicyEdgeTests {
    static let customer = CustomerIds(cookie: "c")
    static let discovery = SegmentCategory.discovery()
    static let a = Segment(id: "a", segmentationId: "s")

    /// A listener told segments (e.g. of the customer before) hears `[]` when the new answer has none,
    /// although the baseline of this customer had none either (see Behaviour D4).
    @Test func d4_aCategoryListenersWereToldSegmentsOfChangesToEmptyWhenTheAnswerHasNone() {
        let baseline = SegmentSnapshot(customer: Self.customer, segments: [:], fetchedAt: Date(timeIntervalSince1970: 0))
        let changes = SegmentDiff.changes(from: baseline, to: [:], for: Self.customer, told: [Self.discovery: [Self.a]])
        #expect(changes == [Self.discovery: []])
        // Told nothing: nothing to change.
        #expect(SegmentDiff.changes(from: baseline, to: [:], for: Self.customer, told: [Self.discovery: []]) == [:])
    }

    /// A `Retry-After` that is not a number adds no wait: the backoff alone decides (see Behaviour T7).
    @Test func t7_aRetryAfterThatIsNotANumberLeavesTheBackoffAlone() {
        let backoff = RetryBackoff(initial: 0.25, maximum: 60, jitter: 0)
        #expect(backoff.delay(attempt: 1, random: 0.5, retryAfter: .nan) == 0.25)
        #expect(backoff.delay(attempt: 1, random: 0.5, retryAfter: nil) == 0.25)
    }
}
