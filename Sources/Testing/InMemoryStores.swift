import SegmentsDomain

/// A ``CustomerStore`` in memory that counts saves, for tests.
public final class InMemoryCustomerStore: CustomerStore, Sendable {
    private let state: Locked<(customer: CustomerIds?, saves: Int)>

    /// A store holding `customer`.
    public init(_ customer: CustomerIds? = nil) {
        state = Locked((customer, 0))
    }

    /// The stored customer.
    public func load() -> CustomerIds? { state.withLock { $0.customer } }
    /// Replaces the stored customer.
    public func save(_ customer: CustomerIds) throws { state.withLock { $0 = (customer, $0.saves + 1) } }
    /// How many times `save` was called.
    public var saveCount: Int { state.withLock { $0.saves } }
}

/// A ``SegmentBaselineStore`` in memory that counts saves, for tests.
public final class InMemorySegmentBaselineStore: SegmentBaselineStore, Sendable {
    private let state: Locked<(baseline: SegmentBaseline, saves: Int)>

    /// A store holding `baseline`.
    public init(_ baseline: SegmentBaseline = .empty) {
        state = Locked((baseline, 0))
    }

    /// The stored baseline.
    public func load() -> SegmentBaseline { state.withLock { $0.baseline } }
    /// Replaces the stored baseline.
    public func save(_ baseline: SegmentBaseline) throws { state.withLock { $0 = (baseline, $0.saves + 1) } }
    /// How many times `save` was called.
    public var saveCount: Int { state.withLock { $0.saves } }
}

/// An ``EventQueueStore`` in memory, for tests.
public final class InMemoryEventQueueStore: EventQueueStore, Sendable {
    private let events: Locked<[TrackedEvent]>

    /// A queue holding `events`, oldest first.
    public init(_ events: [TrackedEvent] = []) {
        self.events = Locked(events)
    }

    /// Every queued item, oldest first.
    public func load() -> [TrackedEvent] { events.value }
    /// Appends an item.
    public func append(_ event: TrackedEvent) throws { events.withLock { $0.append(event) } }
    /// Replaces the item with the same id.
    public func update(_ event: TrackedEvent) throws {
        events.withLock { events in
            if let index = events.firstIndex(where: { $0.id == event.id }) { events[index] = event }
        }
    }
    /// Removes the item with `id`, if present.
    public func remove(id: TrackedEvent.ID) throws { events.withLock { $0.removeAll { $0.id == id } } }
}
