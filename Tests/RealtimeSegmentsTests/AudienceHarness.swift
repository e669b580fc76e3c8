import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// An audience client over a recording fetcher: requests start at once (``ImmediateSegmentsScheduler``)
/// or on virtual time (``TestScheduler``), and cache entries age on the virtual clock.
final class AudienceHarness: Sendable {
    static let candidates = ["seg-1", "seg-2", "seg-3"]
    static let deliveryKey = DispatchSpecificKey<String>()
    /// The time-out of blocking calls that should succeed: it only matters on failure. Under
    /// ThreadSanitizer on a loaded 2-core machine, the CPU-heavy tests on the cooperative pool
    /// hold it for more than 30 s, and the fetch's task waits for it meanwhile.
    static let generous: TimeInterval = 90

    let clock = TestScheduler()
    let logger = RecordingLogger()
    let deliveryQueue = DispatchQueue(label: "audience-tests.delivery")
    let fetcher: RecordingAudienceSegmentFetcher
    let client: AudienceSegmentsClient

    /// - Parameter virtualRequests: start requests on the virtual clock (advance it to run them)
    ///   instead of at once.
    init(
        candidates: [String] = AudienceHarness.candidates, enabled: Bool = true, virtualRequests: Bool = false,
        visitorStorage: AudienceSegmentsClient.Options.VisitorStorage = .inMemory
    ) {
        deliveryQueue.setSpecific(key: Self.deliveryKey, value: "delivery")
        fetcher = RecordingAudienceSegmentFetcher(scheduler: clock)
        fetcher.answer(["seg-1"])
        let scheduler: any SegmentsScheduler = virtualRequests ? clock : ImmediateSegmentsScheduler()
        client = AudienceSegmentsClient(
            fetcher: enabled ? fetcher : nil, candidateSegments: candidates,
            options: .init(runtime: SegmentsRuntime(scheduler: scheduler, clock: clock, logger: logger, deliveryQueue: deliveryQueue), transport: RecordingTransport(), visitorStorage: visitorStorage))
    }

    /// Whether the caller runs on the delivery queue.
    static var onDeliveryQueue: Bool { DispatchQueue.getSpecific(key: deliveryKey) == "delivery" }
}

/// Runs a blocking call on a thread of its own, so no cooperative (or global-queue) thread waits for it.
func onBackgroundThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await onDedicatedThread(body)
}

/// The completion-form answer, awaited.
func completionAnswer(
    _ user: SegmentsUserContext, options: [AudienceSegmentOption] = []
) async -> (error: SegmentsError?, onDeliveryQueue: Bool) {
    await withCheckedContinuation { continuation in
        user.fetchQualifiedSegments(options: options) { error in
            continuation.resume(returning: (error, AudienceHarness.onDeliveryQueue))
        }
    }
}

/// Runs `body` and returns the `SegmentsError` it threw, or `nil`.
func thrownSegmentsError(_ body: () async throws -> Void) async -> SegmentsError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? SegmentsError
    }
}
