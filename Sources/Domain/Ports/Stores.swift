/// Persists the current customer's ids (<doc:Behaviour#E1>, <doc:Behaviour#P1>).
///
/// Implementations never throw from `load`: a missing or unreadable record is `nil` (and logged),
/// so start-up never fails on storage (<doc:Behaviour#P2>).
public protocol CustomerStore: Sendable {
    /// The stored customer, or `nil` when there is none or it could not be read.
    func load() -> CustomerIds?
    /// Replaces the stored customer.
    func save(_ customer: CustomerIds) throws
}

/// Persists the segment baseline and the link memory (<doc:Behaviour#D1>, <doc:Behaviour#C4>).
public protocol SegmentBaselineStore: Sendable {
    /// The stored baseline, or ``SegmentBaseline/empty`` when there is none or it could not be read.
    func load() -> SegmentBaseline
    /// Replaces the stored baseline.
    func save(_ baseline: SegmentBaseline) throws
}

/// Persists the queue of tracked items, oldest first (<doc:Behaviour#E1>, <doc:Behaviour#E4>).
public protocol EventQueueStore: Sendable {
    /// Every queued item, oldest first; unreadable items are skipped (and logged).
    func load() -> [TrackedEvent]
    /// Adds an item at the end of the queue before returning, written so that it survives the
    /// process being killed (<doc:Behaviour#R2>); ``sync()`` then makes it survive a power cut.
    func append(_ event: TrackedEvent) throws
    /// Makes every item appended so far durable against power loss (an `fsync`). Called on the
    /// storage queue, batched (group commit); stores whose `append` is already durable do nothing.
    func sync() throws
    /// Replaces the stored copy of an item with the same id (to record failed attempts).
    func update(_ event: TrackedEvent) throws
    /// Removes an item; removing an unknown id is a no-op.
    func remove(id: TrackedEvent.ID) throws
}

/// Uploads one tracked item to the backend (<doc:Behaviour#E3>): one request per item.
public protocol EventUploader: Sendable {
    /// Uploads `event`; returns only after the backend accepted it with a 2xx, otherwise throws
    /// ``SegmentsError``.
    func upload(_ event: TrackedEvent) async throws
}

extension EventQueueStore {
    /// Makes every appended item durable against power loss. Stores whose `append` is already
    /// durable need nothing here.
    public func sync() throws {}
}
