import SegmentsDomain

/// Keeps the tracking queue in memory only: for apps that want nothing on disk. Queued items are
/// lost when the process ends, so the promise that nothing is lost across restarts
/// (<doc:Behaviour#E4>) does not hold with it.
public final class InMemoryEventQueueStore: EventQueueStore {
    private let queue: Locked<QueuedEvents>

    /// A store holding `events`, oldest first.
    public init(events: [TrackedEvent] = []) {
        self.queue = Locked(QueuedEvents(events))
    }

    /// Every queued item, oldest first.
    public func load() -> [TrackedEvent] {
        queue.withLock { $0.ordered }
    }

    /// Adds an item at the end; an item with the same id is replaced and moves to the end.
    public func append(_ event: TrackedEvent) {
        queue.withLock { $0.append(event) }
    }

    /// Replaces the item with the same id in place; an unknown id is a no-op.
    public func update(_ event: TrackedEvent) {
        queue.withLock { _ = $0.update(event) }
    }

    /// Removes an item; an unknown id is a no-op.
    public func remove(id: TrackedEvent.ID) {
        queue.withLock { _ = $0.remove(id: id) }
    }
}
