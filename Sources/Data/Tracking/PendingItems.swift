import SegmentsDomain

/// The tracking queue in memory: oldest first, with O(1) append, lookup, replace and (amortised)
/// removal by id, so draining n items costs O(n) (<doc:Behaviour#E3>).
///
/// Positions are absolute (`base + index` into `order`) and never reused, so the upload loop
/// keeps a cursor that stays valid while items are removed in front of it or added behind it.
struct PendingItems: Sendable {
    private struct Entry: Sendable {
        var position: Int
        var event: TrackedEvent
    }

    private var items: [TrackedEvent.ID: Entry] = [:]
    /// Ids in queue order; a position whose id is gone or was appended again later is a hole.
    private var order: [TrackedEvent.ID] = []
    /// The absolute position of `order[0]`.
    private var base = 0
    /// Index in `order` of the first position that may be live; everything before is holes.
    private var head = 0

    /// An empty queue.
    init() {}

    /// How many items are queued.
    var count: Int { items.count }
    /// Whether nothing is queued.
    var isEmpty: Bool { items.isEmpty }
    /// The absolute position the next appended item gets.
    var endPosition: Int { base + order.count }

    /// Whether an item with `id` is queued.
    func contains(_ id: TrackedEvent.ID) -> Bool { items[id] != nil }

    /// The queued item with `id`, if any.
    func item(_ id: TrackedEvent.ID) -> TrackedEvent? { items[id]?.event }

    /// Adds `event` at the end; an item with the same id is replaced and moves to the end.
    mutating func append(_ event: TrackedEvent) {
        items[event.id] = Entry(position: endPosition, event: event)
        order.append(event.id)
    }

    /// Replaces the queued item with `event`'s id in place; an unknown id is ignored.
    mutating func update(_ event: TrackedEvent) {
        items[event.id]?.event = event
    }

    /// Removes the item with `id`; an unknown id is ignored.
    mutating func remove(_ id: TrackedEvent.ID) {
        guard items.removeValue(forKey: id) != nil else { return }
        while head < order.count, !isLive(head) { head += 1 }
        if head == order.count || head > 1024 && head * 2 > order.count {
            base += head
            order.removeFirst(head)
            head = 0
        }
    }

    /// The first queued item at or after absolute position `cursor`, with the position after it.
    /// Holes are passed over once per cursor, so a whole drain is O(n).
    func first(atOrAfter cursor: Int) -> (event: TrackedEvent, next: Int)? {
        var index = max(cursor - base, head)
        while index < order.count {
            if let entry = items[order[index]], entry.position == base + index { return (entry.event, base + index + 1) }
            index += 1
        }
        return nil
    }

    /// Every item, oldest first.
    var ordered: [TrackedEvent] {
        var result: [TrackedEvent] = []
        result.reserveCapacity(items.count)
        var cursor = base
        while let (event, next) = first(atOrAfter: cursor) {
            result.append(event)
            cursor = next
        }
        return result
    }

    private func isLive(_ index: Int) -> Bool {
        items[order[index]]?.position == base + index
    }
}
