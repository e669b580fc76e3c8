// Docs/SwiftUI.md, "Test it with the fakes", shows this file verbatim from its first import on
// (DocumentedExamplesTests checks): what a SwiftUI view of the discovery segments reads, tested
// with the fakes and observed with `withObservationTracking`, as SwiftUI observes it.

import Foundation
import Observation
import RealtimeSegments
import SegmentsTesting
import Testing

/// Counts the times a view whose `body` reads `category` would be rendered again: SwiftUI
/// tracks what `body` reads with `withObservationTracking`, and so does this.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor final class Renders {
    private(set) var count = 0
    private let model: SegmentsModel
    private let category: SegmentCategory

    init(of category: SegmentCategory, in model: SegmentsModel) {
        self.model = model
        self.category = category
        track()
    }

    private func track() {
        withObservationTracking {
            _ = model.segments(for: category)                // what the view's body reads
        } onChange: { [weak self] in
            // The model changes on the main actor only. Like SwiftUI, track again after a change.
            MainActor.assumeIsolated {
                self?.count += 1
                self?.track()
            }
        }
    }
}

/// Lets the lists waiting on the delivery queue reach the model: listeners run on the delivery
/// queue, and the model takes their lists on the main actor, through the main queue.
@MainActor func delivered(_ deliveryQueue: DispatchQueue) async {
    deliveryQueue.sync {}
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
}

@Suite(Hang.timeLimit(minutes: 1)) struct DiscoveryViewTests {
    let scheduler = TestScheduler()                          // the clock and the scheduler
    let deliveryQueue = DispatchQueue(label: "test.delivery")
    let storageQueue = DispatchQueue(label: "test.storage")
    let repository: RecordingSegmentRepository
    let client: SegmentsClient
    let browsers = Segment(id: "browsers", segmentationId: "engagement")
    let buyers = Segment(id: "buyers", segmentationId: "lifecycle")

    init() throws {
        repository = RecordingSegmentRepository(scheduler: scheduler)
        client = SegmentsClient(options: .init(
            runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: RecordingLogger(), deliveryQueue: deliveryQueue),
            storage: .inMemory, storageQueue: storageQueue))
        let uploader = RecordingEventUploader(scheduler: scheduler)
        try client.configure(.init(backend: .custom(id: "test", repository: repository, uploader: uploader)))
        storageQueue.sync {}                                 // configure loads the stored state in the background
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func theViewShowsTheDiscoverySegmentsAndFollowsTheirChanges() async throws {
        repository.answer([.discovery(): [browsers]])
        let model = SegmentsModel(categories: [.discovery()], client: client)
        let renders = Renders(of: .discovery(), in: model)
        #expect(model.segments(for: .discovery()) == [])     // nothing loaded yet
        await scheduler.advance(by: 5)                       // the first load, after the debounce
        await delivered(deliveryQueue)
        #expect(model.segments(for: .discovery()) == [browsers])
        #expect(renders.count == 1)

        repository.answer([.discovery(): [browsers, buyers]])
        try client.trackEvent(properties: ["total": 19.99], timestamp: nil, eventType: "purchase")
        await scheduler.advance()                            // immediate mode: the upload runs now
        await scheduler.advance(by: 5)                       // the reload after the upload
        await delivered(deliveryQueue)
        #expect(model.segments(for: .discovery()) == [browsers, buyers])
        #expect(renders.count == 2)

        try client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        await scheduler.advance()
        await scheduler.advance(by: 5)                       // a reload that finds nothing new
        await delivered(deliveryQueue)
        #expect(renders.count == 2)                          // no listener told, no render
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func theModelStopsListeningWhenItIsReleased() {
        do {
            let model = SegmentsModel(categories: [.discovery(), .content()], client: client)
            #expect(model.categories.count == 2)
            #expect(client.listenerCount == 2)               // one listener per category
        }
        #expect(client.listenerCount == 0)
    }
}
