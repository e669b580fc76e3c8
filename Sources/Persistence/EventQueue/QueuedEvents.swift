import SegmentsDomain

/// The queue's content in memory, with the port's semantics in one place for both the file
/// and the in-memory store: oldest first, update and remove by id, unknown ids ignored.
struct QueuedEvents: Sendable {
    private struct Entry: Sendable {
        /// Position in the queue; grows with every append, so sorting by it is oldest first.
        var sequence: Int
        var event: TrackedEvent
    }

    private var entries: [TrackedEvent.ID: Entry] = [:]
    private var nextSequence = 0

    /// An empty queue.
    init() {}

    /// A queue holding `events` in this order.
    init(_ events: [TrackedEvent]) {
        for event in events { append(event) }
    }

    /// How many items are queued.
    var count: Int { entries.count }

    /// Whether an item with `id` is queued.
    func contains(_ id: TrackedEvent.ID) -> Bool {
        entries[id] != nil
    }

    /// Every item, oldest first. Sorting on read keeps append and remove O(1), which matters
    /// more: they run once per event, this runs once per start-up or flush.
    var ordered: [TrackedEvent] {
        entries.values.sorted { $0.sequence < $1.sequence }.map(\.event)
    }

    /// Adds `event` at the end. An item with the same id is replaced and moves to the end: the
    /// newest copy wins, as it would on replaying the journal.
    mutating func append(_ event: TrackedEvent) {
        entries[event.id] = Entry(sequence: nextSequence, event: event)
        nextSequence += 1
    }

    /// Replaces the item with `event`'s id, keeping its place; returns `false` (and changes
    /// nothing) when no such item is queued.
    @discardableResult
    mutating func update(_ event: TrackedEvent) -> Bool {
        guard entries[event.id] != nil else { return false }
        entries[event.id]?.event = event
        return true
    }

    /// Removes the item with `id`; returns `false` when no such item is queued.
    @discardableResult
    mutating func remove(id: TrackedEvent.ID) -> Bool {
        entries.removeValue(forKey: id) != nil
    }
}
