import SegmentsDomain

/// A ``ProtectedDataAvailability`` that signals when a test says so (Behaviour P8 in
/// `Docs/Behaviour.md`): pair it with storage that refuses files, then call ``signalAvailable()``
/// to make the client redo the refused loads and saves.
public final class ManualProtectedDataAvailability: ProtectedDataAvailability {
    private let observers = ObserverList<Void>()

    /// A signal that has not fired.
    public init() {}

    /// Registers `handler` until the observation ends.
    public func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation {
        observers.add { _ in handler() }
    }

    /// How many observations are live.
    public var observerCount: Int { observers.count }

    /// Calls every live handler on the calling thread, outside the lock, as the system's
    /// notification would.
    public func signalAvailable() {
        observers.notify(())
    }
}
