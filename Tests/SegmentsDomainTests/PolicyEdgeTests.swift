import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// Edges of the pure policies that the table-driven cases in PolicyTests leave out.
@Suite(Hang.timeLimit(minutes: 1)) struct PolicyEdgeTests {
    /// A `Retry-After` that is not a number adds no wait: the backoff alone decides (see Behaviour T7).
    @Test func t7_aRetryAfterThatIsNotANumberLeavesTheBackoffAlone() {
        let backoff = RetryBackoff(initial: 0.25, maximum: 60, jitter: 0)
        #expect(backoff.delay(attempt: 1, random: 0.5, retryAfter: .nan) == 0.25)
        #expect(backoff.delay(attempt: 1, random: 0.5, retryAfter: nil) == 0.25)
    }
}
