import Foundation
import SegmentsDomain
import SegmentsData

extension SegmentsClient {
    /// Queues an event for the current customer (see Behaviour E1). It returns once the item is written to
    /// the queue file — it then survives the process being killed — at the cost of one buffered
    /// `write`; the `fsync` for power-loss durability follows on the client's storage queue,
    /// batched (see Behaviour R2).
    ///
    /// - Parameters:
    ///   - properties: the event's properties; Swift literals convert to ``JSONValue``.
    ///   - timestamp: when it happened; now when `nil`.
    ///   - eventType: the event's type, e.g. `purchase`; must not be empty.
    /// - Throws: ``SegmentsError`` `.notConfigured`; `.invalidConfiguration` for an empty event
    ///   type or properties that could not be replayed (nested deeper than 64 levels, over 64 KiB
    ///   encoded, non-finite numbers: Behaviour E6); `.storage` when the queue is full
    ///   (``Options/eventQueueCapacity``) or cannot be written.
    public func trackEvent(properties: [String: JSONValue], timestamp: Date?, eventType: String) throws {
        guard !eventType.isEmpty else {
            throw SegmentsError(.invalidConfiguration, "The event type is empty")
        }
        let pipeline = try configuredPipeline
        guard let customer = engine.customer else { throw SegmentsError.notConfigured }
        try pipeline.track(eventType: eventType, properties: properties, timestamp: timestamp, customer: customer)
    }

    /// Merges hard ids into the current customer and queues a customer update (see Behaviour E1, T4).
    ///
    /// Ids are added or overwritten, never removed; a `cookie` key is ignored. A change of ids
    /// requests a segments reload. Merging the ids and queueing the update are one step: when
    /// the update cannot be queued, the ids stay as they were.
    /// - Throws: ``SegmentsError`` `.notConfigured`, `.invalidConfiguration` for properties that
    ///   could not be replayed (see Behaviour E6), or `.storage` when the queue is full or cannot be written.
    public func identifyCustomer(
        customerIds: [String: String], properties: [String: JSONValue], timestamp: Date?
    ) throws {
        let pipeline = try configuredPipeline
        let merged = try engine.identify(hardIds: customerIds) { merged in
            try pipeline.trackCustomerUpdate(properties: properties, timestamp: timestamp, customer: merged)
        }
        guard merged != nil else { throw SegmentsError.notConfigured }
    }

    /// When queued events are uploaded; setting it takes effect at once (see Behaviour E2, T8). A mode set
    /// before configuration is applied by ``configure(_:)`` unless its ``Configuration`` names one.
    public var flushingMode: FlushingMode {
        get {
            let attachment = attachment.value
            return attachment.pipeline?.mode ?? attachment.modeBeforeConfigure ?? .immediate
        }
        set {
            let pipeline = attachment.withLock { attachment -> TrackingPipeline? in
                if attachment.pipeline == nil { attachment.modeBeforeConfigure = newValue }
                return attachment.pipeline
            }
            guard let pipeline else { return }
            pipeline.mode = newValue
            engine.setTrackingImmediate(newValue == .immediate)
        }
    }

    /// Uploads everything queued (see Behaviour E5); a call during a flush joins it.
    public func flush() async -> FlushResult {
        guard let pipeline = attachment.value.pipeline else {
            return .failure(SegmentsError.notConfigured)
        }
        return await pipeline.flush()
    }

    /// The completion-handler form of ``flush()``, answered on the delivery queue.
    public func flush(completion: @escaping @Sendable (FlushResult) -> Void) {
        let queue = options.runtime.deliveryQueue
        guard let pipeline = attachment.value.pipeline else {
            queue.async { completion(.failure(SegmentsError.notConfigured)) }
            return
        }
        pipeline.flush { result in queue.async { completion(result) } }
    }

    /// How many events and customer updates wait for upload, answered at once from memory.
    ///
    /// It never waits for disk work (see Behaviour R1). Right after ``configure(_:)`` the stored
    /// queue is still loading in the background (R3): meanwhile this counts what is known so far,
    /// the items tracked since configure, not yet the stored ones. For the exact count, stored items
    /// included, use ``countQueuedEvents()``. 0 when not configured.
    public var queuedEventCount: Int {
        attachment.value.pipeline?.queuedCount ?? 0
    }

    /// The exact number of events and customer updates waiting for upload, stored ones included.
    ///
    /// It resumes once the stored queue has loaded (at once when it already has), without blocking
    /// a thread (see Behaviour R1, R3). 0 when not configured.
    public func countQueuedEvents() async -> Int {
        guard let pipeline = attachment.value.pipeline else { return 0 }
        return await withCheckedContinuation { continuation in
            pipeline.queuedCount { continuation.resume(returning: $0) }
        }
    }
}
