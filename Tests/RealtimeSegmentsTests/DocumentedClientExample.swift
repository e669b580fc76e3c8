// Docs/TestingWithFakes.md, "A complete example (Swift Testing)", shows this file verbatim from its
// first import on (DocumentedExamplesTests checks): app code over the instance API, tested with fakes.

import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

/// The app code under test: what the checkout screen reports after a purchase.
struct Checkout {
    let client: SegmentsClient

    func purchased(total: Double) throws {
        try client.trackEvent(properties: ["total": .double(total)], timestamp: nil, eventType: "purchase")
    }
}

/// Collects what a listener is told; it is called on the delivery queue.
final class Told: Sendable {
    private let lists = LockedValue<[[Segment]]>([])
    func record(_ list: [Segment]) { lists.withLock { $0.append(list) } }
    var all: [[Segment]] { lists.value }
}

@Suite(Hang.timeLimit(minutes: 1)) struct CheckoutTests {
    let scheduler = TestScheduler()                          // the clock and the scheduler
    let deliveryQueue = DispatchQueue(label: "test.delivery")
    let storageQueue = DispatchQueue(label: "test.storage")
    let logger = RecordingLogger()
    let repository: RecordingSegmentRepository
    let uploader: RecordingEventUploader
    let client: SegmentsClient
    let buyers = Segment(id: "buyers", segmentationId: "lifecycle")

    init() throws {
        repository = RecordingSegmentRepository(scheduler: scheduler)
        uploader = RecordingEventUploader(scheduler: scheduler)
        client = SegmentsClient(options: .init(
            runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger, deliveryQueue: deliveryQueue),
            timings: SegmentationTimings(retry: RetryBackoff(jitter: 0)),   // exact backoff delays
            storage: .inMemory, storageQueue: storageQueue))
        try client.configure(.init(backend: .custom(id: "test", repository: repository, uploader: uploader)))
        storageQueue.sync {}                                 // configure loads the stored state in the background
    }

    @Test func aPurchaseMakesTheCustomerABuyer() async throws {
        var content = client.changes(of: .content(), includeFirstLoad: true).makeAsyncIterator()
        #expect(scheduler.pendingDelays == [5])              // the reload waits for the debounce
        await scheduler.advance(by: 5)
        #expect(await content.next() == [])                  // the first load: no segments yet

        repository.answer([.content(): [buyers]])
        try Checkout(client: client).purchased(total: 19.99)
        await scheduler.advance()                            // immediate mode: the upload runs now
        #expect(uploader.accepted.map(\.kind) == [.event(type: "purchase")])
        await scheduler.advance(by: 5)                       // the reload after the upload
        #expect(await content.next() == [buyers])
        #expect(repository.fetches.count == 2)
    }

    @Test func aFailedReloadIsRetriedAfterTheBackoff() async throws {
        repository.failNextFetches(with: SegmentsError(.httpStatus, "unavailable", httpStatus: 503))
        repository.answer([.content(): [buyers]])
        let told = Told()
        client.addListener(category: .content()) { told.record($0) }
        await scheduler.advance(by: 5)                       // the fetch fails
        deliveryQueue.sync {}                                // run what was queued for listeners
        #expect(told.all.isEmpty)
        #expect(logger.count(of: "Segments: Fetch of segments failed: unavailable (HTTP 503)") == 1)
        #expect(scheduler.pendingDelays == [2])              // first retry: 2 s
        await scheduler.advance(by: 2)
        deliveryQueue.sync {}
        #expect(told.all == [[buyers]])
    }

    @Test func aReadAnswersWithTheRepositoryError() async throws {
        repository.failNextFetches(with: SegmentsError(.timeout, "too slow"))
        let result = await withCheckedContinuation { continuation in
            client.getSegments(force: true, category: .content()) { continuation.resume(returning: $0) }
            Task { await scheduler.advance() }               // the read is registered: run its fetch
        }
        #expect(throws: SegmentsError.self) { try result.get() }
    }
}
