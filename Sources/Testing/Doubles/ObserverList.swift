import SegmentsDomain

/// The live observations of a port a test drives: each registration's handler, called in
/// registration order, outside the lock, on the thread that notifies. Shared by
/// ``ManualAppLifecycle``, ``ManualProtectedDataAvailability`` and ``ManualNetworkPath``.
final class ObserverList<Value: Sendable>: Sendable {
    private let handlers = Locked<(next: Int, byID: [Int: @Sendable (Value) -> Void])>((0, [:]))

    /// Registers `handler` until the returned observation ends.
    func add(_ handler: @escaping @Sendable (Value) -> Void) -> LifecycleObservation {
        let id = handlers.withLock { handlers in
            handlers.next += 1
            handlers.byID[handlers.next] = handler
            return handlers.next
        }
        return LifecycleObservation { [handlers] in
            _ = handlers.withLock { $0.byID.removeValue(forKey: id) }
        }
    }

    /// How many observations are live.
    var count: Int { handlers.withLock { $0.byID.count } }

    /// Calls every live handler with `value`.
    func notify(_ value: Value) {
        let current = handlers.withLock { $0.byID.sorted { $0.key < $1.key }.map(\.value) }
        for handler in current { handler(value) }
    }
}
