import SegmentsDomain

/// A ``ProtectedDataAvailability`` that reports and signals what a test says (Behaviour P8 in
/// `Docs/Behaviour.md`): made unavailable, it makes refused files transient, as before the device's
/// first unlock; pair it with storage that refuses files, then call ``signalAvailable()`` to make
/// the client redo the refused loads and saves. Made available, a refused file is a `.storage`
/// error, as on a platform without data protection.
public final class ManualProtectedDataAvailability: ProtectedDataAvailability {
    private let observers = ObserverList<Void>()
    private let available: Locked<Bool>

    /// A signal that has not fired: protected data is unavailable until ``signalAvailable()``.
    public init() {
        available = Locked(false)
    }

    /// A signal that has not fired, reporting `isAvailable` until ``signalAvailable()`` or
    /// ``makeUnavailable()``.
    public init(isAvailable: Bool) {
        available = Locked(isAvailable)
    }

    /// Registers `handler` until the observation ends.
    public func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation {
        observers.add { _ in handler() }
    }

    /// What the port reports now.
    public var isProtectedDataAvailable: Bool { available.value }

    /// How many observations are live.
    public var observerCount: Int { observers.count }

    /// Reports protected data available from now on, then calls every live handler on the calling
    /// thread, outside the lock, as the system's notification would.
    public func signalAvailable() {
        available.withLock { $0 = true }
        observers.notify(())
    }

    /// Reports protected data unavailable from now on, as when a device locks again; calls no
    /// handler.
    public func makeUnavailable() {
        available.withLock { $0 = false }
    }
}
