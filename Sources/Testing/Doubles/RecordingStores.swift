import SegmentsDomain

/// A ``CustomerStore`` in memory that counts saves and can be made to fail, for tests.
public final class RecordingCustomerStore: CustomerStore, Sendable {
    private let state: Locked<(customer: CustomerIds?, saves: Int, failure: SegmentsError?)>

    /// A store holding `customer`.
    public init(_ customer: CustomerIds? = nil) {
        state = Locked((customer, 0, nil))
    }

    /// The stored customer.
    public func load() -> CustomerIds? { state.withLock { $0.customer } }

    /// Replaces the stored customer, or throws the failure set by ``failSaves(with:)``.
    public func save(_ customer: CustomerIds) throws {
        try state.withLock { state in
            state.saves += 1
            if let failure = state.failure { throw failure }
            state.customer = customer
        }
    }

    /// How many times `save` was called.
    public var saveCount: Int { state.withLock { $0.saves } }

    /// Makes every later save throw `error` (or succeed again with `nil`).
    public func failSaves(with error: SegmentsError?) { state.withLock { $0.failure = error } }
}

/// A ``SegmentBaselineStore`` in memory that counts saves and can be made to fail, for tests.
public final class RecordingSegmentBaselineStore: SegmentBaselineStore, Sendable {
    private let state: Locked<(baseline: SegmentBaseline, saves: Int, failure: SegmentsError?)>

    /// A store holding `baseline`.
    public init(_ baseline: SegmentBaseline = .empty) {
        state = Locked((baseline, 0, nil))
    }

    /// The stored baseline.
    public func load() -> SegmentBaseline { state.withLock { $0.baseline } }

    /// Replaces the stored baseline, or throws the failure set by ``failSaves(with:)``.
    public func save(_ baseline: SegmentBaseline) throws {
        try state.withLock { state in
            state.saves += 1
            if let failure = state.failure { throw failure }
            state.baseline = baseline
        }
    }

    /// How many times `save` was called.
    public var saveCount: Int { state.withLock { $0.saves } }

    /// Makes every later save throw `error` (or succeed again with `nil`).
    public func failSaves(with error: SegmentsError?) { state.withLock { $0.failure = error } }
}

/// An ``EventQueueStore`` in memory that can be made to fail appends, for tests.
public final class RecordingEventQueueStore: EventQueueStore, Sendable {
    private let state: Locked<(events: [TrackedEvent], failure: SegmentsError?)>
    private let syncLog = Locked<[Int]>([])

    /// A queue holding `events`, oldest first.
    public init(_ events: [TrackedEvent] = []) {
        state = Locked((events, nil))
    }

    /// Records a sync (group commit, Behaviour R2 in `Docs/Behaviour.md`) with the number of items
    /// queued at that moment.
    public func sync() throws {
        let count = state.withLock { $0.events.count }
        syncLog.withLock { $0.append(count) }
    }

    /// For each sync so far, how many items were queued when it ran.
    public var syncs: [Int] { syncLog.value }

    /// Every queued item, oldest first.
    public func load() -> [TrackedEvent] { state.withLock { $0.events } }

    /// Appends an item, or throws the failure set by ``failAppends(with:)``.
    public func append(_ event: TrackedEvent) throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            state.events.append(event)
        }
    }

    /// Replaces the item with the same id.
    public func update(_ event: TrackedEvent) throws {
        state.withLock { state in
            if let index = state.events.firstIndex(where: { $0.id == event.id }) { state.events[index] = event }
        }
    }

    /// Removes the item with `id`, if present.
    public func remove(id: TrackedEvent.ID) throws { state.withLock { $0.events.removeAll { $0.id == id } } }

    /// Makes every later append throw `error` (or succeed again with `nil`).
    public func failAppends(with error: SegmentsError?) { state.withLock { $0.failure = error } }
}
