// Docs/TestingWithFakes.md, "Testing your code that uses Exponea", shows this file verbatim from its
// first import on (DocumentedExamplesTests checks): an app's view-model over the facade, tested
// with an injected client.

import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

/// The app code under test: a banner shown to customers in the "vip" discovery segment. It takes
/// the facade as parameters, `.shared` by default, so a test can hand it its own. It uses no type
/// of `SegmentsTesting`, which an app never links: its text is guarded by a plain lock.
final class PromoBanner: Sendable {
    private let exponea: Exponea
    private let segmentation: SegmentationManager
    private let callback: SegmentCallbackData
    private let shown = BannerText()    // written on the delivery queue, read by the UI

    init(exponea: Exponea = .shared, segmentation: SegmentationManager = .shared) {
        self.exponea = exponea
        self.segmentation = segmentation
        callback = SegmentCallbackData(category: .discovery(), isIncludeFirstLoad: true) { [shown] segments in
            shown.set(PromoBanner.text(for: segments))
        }
    }

    /// What the banner says, or `nil` while it is hidden.
    var text: String? { shown.get() }

    func appear() { segmentation.addCallback(callbackData: callback) }
    func disappear() { segmentation.removeCallback(callbackData: callback) }

    /// Pull to refresh: asks the backend now.
    func refresh() {
        exponea.getSegments(force: true, category: .discovery()) { [shown] segments in
            shown.set(PromoBanner.text(for: segments))
        }
    }

    static func text(for segments: [Segment]) -> String? {
        segments.contains { $0.id == "vip" } ? "20% off for VIP members" : nil
    }
}

/// The banner's text, set on the delivery queue and read on the main thread: every access holds
/// `lock`, which is what makes the `@unchecked Sendable` true.
final class BannerText: @unchecked Sendable {
    private let lock = NSLock()
    private var text: String?

    func set(_ newText: String?) {
        lock.lock()
        defer { lock.unlock() }
        text = newText
    }

    func get() -> String? {
        lock.lock()
        defer { lock.unlock() }
        return text
    }
}

@Suite(Hang.timeLimit(minutes: 1)) struct PromoBannerTests {
    let scheduler = TestScheduler()                  // the clock and the scheduler: virtual time
    let deliveryQueue = DispatchQueue(label: "test.delivery")
    let storageQueue = DispatchQueue(label: "test.storage")
    let repository: RecordingSegmentRepository       // the backend, scripted and recorded
    let exponea: Exponea
    let banner: PromoBanner
    let vip = Segment(id: "vip", segmentationId: "tiers")

    init() throws {
        repository = RecordingSegmentRepository(scheduler: scheduler)
        let client = SegmentsClient(options: .init(
            runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: RecordingLogger(), deliveryQueue: deliveryQueue),
            storage: .inMemory, storageQueue: storageQueue))
        try client.configure(.init(backend: .custom(
            id: "test", repository: repository, uploader: RecordingEventUploader(scheduler: scheduler))))
        storageQueue.sync {}                         // configure loads the stored state in the background
        exponea = Exponea(client: client)             // this test's own instance, not Exponea.shared
        banner = PromoBanner(exponea: exponea, segmentation: SegmentationManager(exponea: exponea))
    }

    @Test func t1_t4_theBannerShowsOnceTheCustomerIsIdentifiedAsVIP() async throws {
        repository.answer([.discovery(): [vip]], forCustomerIds: ["registered": "jane@example.com"])
        banner.appear()
        await scheduler.advance(by: 5)               // the first load, after the 5 s debounce
        deliveryQueue.sync {}                        // run the callback
        #expect(repository.fetches.count == 1)
        #expect(banner.text == nil)                  // an anonymous customer is not VIP

        exponea.identifyCustomer(customerIds: ["registered": "jane@example.com"])
        await scheduler.advance(by: 5)               // the reload the new ids request
        deliveryQueue.sync {}
        #expect(banner.text == "20% off for VIP members")
        #expect(repository.fetches.last?.values["registered"] == "jane@example.com")
    }

    @Test func g2_refreshAsksTheBackendAtOnce() async throws {
        repository.answer([.discovery(): [vip]])
        banner.refresh()                             // registers the read before it returns
        await scheduler.advance()                    // the forced read fetches now
        deliveryQueue.sync {}                        // run the completion
        #expect(banner.text == "20% off for VIP members")
        #expect(repository.fetches.count == 1)
    }

    @Test func d7_aBannerThatDisappearedIsNoLongerTold() async throws {
        banner.appear()
        banner.disappear()
        repository.answer([.discovery(): [vip]])
        await scheduler.runUntilIdle()
        deliveryQueue.sync {}
        #expect(banner.text == nil)
        #expect(repository.fetches.isEmpty)          // no listener left: nothing was fetched
    }
}
