/// The faults waiting to be played, consumed per request in FIFO order.
struct EmulatorFaultQueue: Sendable {
    private struct Entry: Sendable {
        var fault: EmulatorFault
        var route: EmulatorRoute
        var remaining: Int
    }

    private var entries: [Entry] = []

    /// Adds `count` plays of `fault` for requests on `route` (``EmulatorRoute/any`` matches all).
    mutating func add(_ fault: EmulatorFault, route: EmulatorRoute, count: Int) {
        guard count > 0 else { return }
        entries.append(Entry(fault: fault, route: route, remaining: count))
    }

    /// The oldest fault that applies to `route`, consumed.
    mutating func take(for route: EmulatorRoute) -> EmulatorFault? {
        guard let index = entries.firstIndex(where: { $0.route == .any || $0.route == route }) else { return nil }
        let fault = entries[index].fault
        entries[index].remaining -= 1
        if entries[index].remaining == 0 { entries.remove(at: index) }
        return fault
    }

    /// Plays left over all entries.
    var pendingCount: Int { entries.reduce(0) { $0 + $1.remaining } }

    mutating func removeAll() { entries.removeAll() }
}
