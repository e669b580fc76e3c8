import Foundation
import Testing
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Re-configuring keeps a pending reload (see Behaviour T6) and its max wait (T5): an app that
/// configures again and again cannot starve its listeners.
@Suite(Hang.timeLimit(minutes: 2)) struct ReconfigureTimingTests {
    @Test func t5_t6_reconfiguringEveryFourSecondsCannotPostponeAReloadPastTheMaxWait() async throws {
        let harness = ClientHarness()
        try harness.configure()
        await harness.advance()
        harness.client.addListener(category: .discovery()) { _ in }  // T1: a burst starts at 0 s
        for _ in 0..<7 {
            await harness.advance(by: 4)
            try harness.configure()  // 4, 8, …, 28 s: each a new request (T2), never a new burst
        }
        await harness.advance(by: 1.9)  // 29.9 s
        #expect(harness.repository.fetches.isEmpty)
        await harness.advance(by: 0.1)  // 30 s: the burst's max wait
        #expect(harness.repository.fetches.count == 1)
    }

    @Test func t6_aReconfigureRequestsThePendingReloadAgainFiveSecondsLater() async throws {
        let harness = ClientHarness()
        try harness.configure()
        await harness.advance()
        harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 4)
        try harness.configure()  // the configure is a request: the debounce restarts from it
        await harness.advance(by: 4.9)
        #expect(harness.repository.fetches.isEmpty)
        await harness.advance(by: 0.1)
        #expect(harness.repository.fetches.count == 1)
    }
}
