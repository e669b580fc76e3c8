import SegmentsDomain

/// A ``ProtectedDataAvailability`` that signals when a test says so (see Behaviour P8): pair it with
/// storage that refuses files, then call ``signalAvailable()`` to make the client redo the refused
/// loads and saves.
public final class ManualProtectedDataAvailability: ProtectedDataAvailability {
    private let handlers = Locked<[Int: @Sendable () -> Void]>([:])
    private let nextID = Locked(0)

    /// A signal that has not fired.
    public init() {}

    /// Registers `handler` until the observation ends.
    public func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        handlers.withLock { $0[id] = handler }
        return ProtectedDataObservation { [handlers] in
            _ = handlers.withLock { $0.removeValue(forKey: id) }
        }
    }

    /// How many observations are live.
    public var observerCount: Int { handlers.value.count }

    /// Calls every live handler on the calling thread, outside the lock, as the system's
    /// notification would.
    public func signalAvailable() {
        let current = handlers.withLock { Array($0.values) }
        for handler in current { handler() }
    }
}
