import Foundation
import SegmentsDomain
import SegmentsData

extension SegmentsClient {
    /// Queues an event for the current customer (<doc:Behaviour#E1>). It returns once the item is
    /// written to the queue file — it then survives the process being killed — at the cost of one
    /// buffered `write`; the `fsync` for power-loss durability follows on the client's storage queue,
    /// batched (<doc:Behaviour#R2>).
    ///
    /// The ``defaultProperties`` in force are added to the event; its own keys win
    /// (<doc:Behaviour#E8>). A non-finite number (NaN, ±infinity) in `properties` is dropped — its
    /// key, or its array element — with one warning naming its key path, and the rest is tracked
    /// (<doc:Behaviour#E6>).
    ///
    /// Before the first ``configure(_:)`` the call is kept in memory, in call order with the other
    /// tracking calls, ``identifyCustomer(customerIds:properties:timestamp:)`` and ``anonymize()``
    /// (at most 1,000; more are refused), and applied when `configure` runs: the event is then
    /// queued stamped with the configured customer (its ids as the calls before it left them), with
    /// the time of this call. Such calls are lost if the process ends before `configure`, and a
    /// ``stop()`` before `configure` drops them (<doc:Behaviour#E1>).
    ///
    /// - Parameters:
    ///   - properties: the event's properties; Swift literals convert to ``JSONValue``.
    ///   - timestamp: when it happened; now when `nil`.
    ///   - eventType: the event's type, e.g. `purchase`; must not be empty.
    /// - Throws: ``SegmentsError`` `.notConfigured` after ``stop()``, or before the first configure
    ///   when 1,000 calls wait already; `.invalidConfiguration` for an empty event type or properties
    ///   that could not be replayed (nested deeper than 64 levels, over 64 KiB encoded:
    ///   <doc:Behaviour#E6>); `.storage` when the queue is full (``Options/eventQueueCapacity``) or
    ///   cannot be written.
    public func trackEvent(properties: [String: JSONValue], timestamp: Date?, eventType: String) throws {
        guard !eventType.isEmpty else {
            throw SegmentsError(.invalidConfiguration, "The event type is empty")
        }
        let properties = try accepted(properties, timestamp: timestamp, by: "trackEvent")
        try queue(HeldCall(.event(type: eventType), properties: properties, timestamp: timestamp)) { stamp, pipeline in
            try pipeline.track(
                eventType: eventType, properties: stamp.defaults.event(properties), timestamp: timestamp, customer: stamp.customer)
        }
    }

    /// Merges hard ids into the current customer and queues a customer update (<doc:Behaviour#E1>,
    /// <doc:Behaviour#T4>).
    ///
    /// Ids are added or overwritten, never removed; a `cookie` key is ignored. A change of ids
    /// requests a segments reload. The update is queued first, stamped with the merged ids, and the
    /// ids are merged only once it is queued: when it cannot be queued, the ids stay as they were.
    /// The call takes its place in the client's one order when it reads the customer
    /// (<doc:Behaviour#A4>): when another call (`anonymize`, a `configure` on other storage) replaces
    /// that customer before the ids are merged, the identify counts as made before it — its update
    /// is queued for the customer it was stamped with, and the new customer is left as that call
    /// made it.
    ///
    /// The ``defaultProperties`` are added to the update when the configuration allows it
    /// (``Configuration/allowDefaultCustomerProperties``, <doc:Behaviour#E8>); non-finite numbers are
    /// dropped with one warning (<doc:Behaviour#E6>). Before the first ``configure(_:)`` the call
    /// waits in memory with the other tracking calls, in call order, as
    /// ``trackEvent(properties:timestamp:eventType:)`` says: at configure its ids merge into the
    /// configured customer, unless an ``anonymize()`` made after it replaced that customer
    /// (<doc:Behaviour#E1>).
    /// - Throws: ``SegmentsError`` `.notConfigured` after ``stop()``, or before the first configure
    ///   when 1,000 calls wait already; `.invalidConfiguration` for properties that could not be
    ///   replayed (<doc:Behaviour#E6>), or `.storage` when the queue is full or cannot be written.
    public func identifyCustomer(
        customerIds: [String: String], properties: [String: JSONValue], timestamp: Date?
    ) throws {
        let properties = try accepted(properties, timestamp: timestamp, by: "identifyCustomer")
        // The identify takes its place in the one order first, which gives the stamp; the update
        // is written; then the ids are merged, in that order among identify calls. When queueing
        // fails nothing changes; when another lifecycle call replaced the customer in between,
        // this identify came before it (see Behaviour E1, A4). Held before configure, it merges
        // there.
        var ticket: Int?
        let stamp: SegmentationEngine.Stamp?
        do {
            stamp = try queue(
                HeldCall(.identify(hardIds: customerIds), properties: properties, timestamp: timestamp),
                stamping: {
                    if let stale = ticket { self.engine.endIdentify(stale, queued: false) }  // its pipeline stopped: again
                    ticket = nil
                    guard let (next, stamp) = self.engine.beginIdentify(hardIds: customerIds) else { return nil }
                    ticket = next
                    return stamp
                },
                { stamp, pipeline in
                    let update = stamp.defaults.customerUpdate(properties)
                    do {
                        return try pipeline.trackCustomerUpdate(properties: update, timestamp: timestamp, customer: stamp.customer)
                    } catch let error as SegmentsError where error.code == .stopped {
                        // A stop decided after this identify took it in (its ids merged): it came
                        // first, so its update is written, for the next start (see Behaviour A4).
                        guard let ticket, self.engine.identifyCameBeforeTheStop(ticket) else { throw error }
                        return try pipeline.trackCustomerUpdate(
                            properties: update, timestamp: timestamp, customer: stamp.customer, evenIfStopped: true)
                    }
                })
        } catch {
            if let ticket { engine.endIdentify(ticket, queued: false) }
            throw error
        }
        // Queued with the last ticket's stamp, or held for configure (a ticket begun before is void).
        if let ticket { engine.endIdentify(ticket, queued: stamp != nil) }
    }

    /// Properties as they are tracked (<doc:Behaviour#E6>): non-finite numbers dropped with one
    /// warning naming their key paths; refused when too deep or too large, or when `timestamp` is
    /// outside the years 1 to 4001 — at the door, before configure too.
    func accepted(
        _ properties: [String: JSONValue], timestamp: Date? = nil, by call: String, root: String = "properties"
    ) throws -> [String: JSONValue] {
        let accepted = try ReplayableEvent.accepting(properties, root: root)
        if let timestamp { try ReplayableEvent.check(timestamp: timestamp) }
        if let warning = accepted.warning(for: call) { options.runtime.logger.log(.warning, warning) }
        return accepted.properties
    }

    /// Stamps an item with the current customer and queues it in the pipeline of the same
    /// configuration (<doc:Behaviour#A4>). When a re-configure stops that pipeline in between, the item
    /// is either refused (and queued again in the new one) or on disk already: a new pipeline on the
    /// same store takes it over, one on another store leaves it for its own integration's next start.
    /// Before the first configure, `held` is kept for it instead (<doc:Behaviour#E1>).
    /// - Returns: the stamp used; `nil` when the call was held for the first configure.
    @discardableResult
    private func queue(
        _ held: @autoclosure () -> HeldCall,
        stamping: (() -> SegmentationEngine.Stamp?)? = nil,
        _ enqueue: (SegmentationEngine.Stamp, TrackingPipeline) throws -> TrackingPipeline.Written
    ) throws -> SegmentationEngine.Stamp? {
        for attempt in 1...3 {
            // The customer and the pipeline of one configuration, read in one step (see Behaviour A4).
            guard let current = engine.stamp, !current.holds else {
                switch engine.hold(held()) {
                case .held: return nil
                case .full:
                    throw SegmentsError(
                        .notConfigured, "\(WaitingCalls.capacity) calls made before configure wait already; this one is refused")
                case .configured: continue  // configured meanwhile: stamp it as usual
                case .stopped: throw SegmentsError.notConfigured
                }
            }
            // An identify takes its place in the order here (its own stamp); `nil`: look again.
            let stamp: SegmentationEngine.Stamp
            if let stamping {
                guard let begun = stamping() else { continue }
                stamp = begun
            } else {
                stamp = current
            }
            guard let pipeline = stamp.tracking else { throw SegmentsError.notConfigured }
            let written: TrackingPipeline.Written
            do {
                written = try enqueue(stamp, pipeline)
            } catch let error as SegmentsError where error.code == .stopped && attempt < 3 && engine.isConfigured {
                continue
            }
            if !written.queued, let now = engine.stamp, let successor = now.tracking, successor !== pipeline,
                now.storageID != nil, now.storageID == stamp.storageID
            {
                successor.adopt(written.event)
            }
            return stamp
        }
        throw SegmentsError.notConfigured
    }

    /// When queued events are uploaded; setting it takes effect at once (<doc:Behaviour#E2>,
    /// <doc:Behaviour#T8>). A mode set before configuration is applied by ``configure(_:)`` unless
    /// its ``Configuration`` names one. A periodic interval that is not finite and above 0 is
    /// refused with an error log line, and the mode stays as it was (<doc:Behaviour#E2>).
    public var flushingMode: FlushingMode {
        get { engine.flushingMode }
        set {
            do {
                try newValue.validate()
                engine.flushingMode = newValue
            } catch {
                options.runtime.logger.log(.error, "Tracking: Flushing mode refused: \(SegmentsError.wrapping(error))")
            }
        }
    }

    /// Uploads everything queued and returns how many items went up, or the failure that ended the
    /// flush (<doc:Behaviour#E5>); a call during a flush joins it and gets its result.
    public func flush() async -> SegmentsFlushResult {
        guard let pipeline = engine.stamp?.tracking else {
            return .failure(SegmentsError.notConfigured)
        }
        return await pipeline.flush()
    }

    /// The completion-handler form of ``flush()``, answered on the delivery queue.
    public func flush(completion: @escaping @Sendable (SegmentsFlushResult) -> Void) {
        let queue = options.runtime.deliveryQueue
        guard let pipeline = engine.stamp?.tracking else {
            queue.async { completion(.failure(SegmentsError.notConfigured)) }
            return
        }
        pipeline.flush { result in queue.async { completion(result) } }
    }

    /// How many events and customer updates wait for upload, answered at once from memory.
    ///
    /// It never waits for disk work (<doc:Behaviour#R1>). Right after ``configure(_:)`` the stored
    /// queue is still loading in the background (<doc:Behaviour#R3>): meanwhile this counts what is
    /// known so far, the items tracked since configure, not yet the stored ones. For the exact
    /// count, stored items included, use ``countQueuedEvents()``. 0 when not configured.
    public var queuedEventCount: Int {
        engine.stamp?.tracking?.queuedCount ?? 0
    }

    /// The exact number of events and customer updates waiting for upload, stored ones included.
    ///
    /// It resumes once the stored queue has loaded (at once when it already has), without blocking
    /// a thread (<doc:Behaviour#R1>, <doc:Behaviour#R3>). 0 when not configured.
    public func countQueuedEvents() async -> Int {
        guard let pipeline = engine.stamp?.tracking else { return 0 }
        return await withCheckedContinuation { continuation in
            pipeline.queuedCount { continuation.resume(returning: $0) }
        }
    }
}
