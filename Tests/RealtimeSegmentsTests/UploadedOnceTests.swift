import Foundation
import Testing
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// An item goes up once in a run without a crash, across a re-configure or a stop of the client
/// on the same storage (Behaviour E3, E4, A3, A4, E5; issue 32, finding 11).
@Suite(Hang.timeLimit(minutes: 1)) struct UploadedOnceTests {
    enum Ending: String, CaseIterable, Sendable {
        /// configure again on the same storage.
        case reconfigure
        /// stop(), then configure again on the same storage.
        case stopThenConfigure
    }

    /// An event tracked in immediate mode while the storage queue is busy: its upload is decided
    /// (queued on the scheduler, not sent yet) when the configuration ends. The ended pipeline
    /// sends nothing after its end (A3); the next pipeline on the same storage loads the item and
    /// uploads it, once.
    @Test(arguments: Ending.allCases)
    func e4_a4_anItemQueuedBeforeAReconfigureToTheSameStorageIsUploadedOnce(_ ending: Ending) async throws {
        let harness = ClientHarness(
            storage: .custom(customer: InMemoryCustomerStore(), baseline: InMemorySegmentBaselineStore(), events: InMemoryEventQueueStore()))
        try harness.configure()
        await harness.advance()
        harness.storageQueue.suspend()  // the storage queue is busy
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        if ending == .stopThenConfigure { harness.client.stop() }
        try harness.configure()
        harness.storageQueue.resume()
        for _ in 0..<3 { await harness.advance() }
        #expect(harness.uploader.accepted.map(\.kind) == [.event(type: "view_item")])
        #expect(harness.client.queuedEventCount == 0)
    }

    /// Whoever waited for the flush the replaced configuration had begun joins the next
    /// configuration's flush on the same storage (E5): it hears that flush's result, and the item
    /// goes up once.
    @Test func e5_a4_aFlushBegunBeforeAReconfigureToTheSameStorageReportsTheNextOnesResult() async throws {
        let harness = ClientHarness(
            storage: .custom(customer: InMemoryCustomerStore(), baseline: InMemorySegmentBaselineStore(), events: InMemoryEventQueueStore()))
        try harness.configure(flushingMode: .manual)
        await harness.advance()
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        let results = Recorder<SegmentsFlushResult>()
        harness.client.flush { results.record($0) }
        try harness.configure(flushingMode: .manual)
        for _ in 0..<3 { await harness.advance() }
        #expect(results.all.count == 1)
        if case .success(let count) = results.all.first { #expect(count == 1) } else { Issue.record("flush result \(results.all)") }
        #expect(harness.uploader.accepted.count == 1)
    }
}
