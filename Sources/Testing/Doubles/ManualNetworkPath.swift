import SegmentsDomain

/// A ``NetworkPath`` that a test drives (Behaviour N1–N3 in `Docs/Behaviour.md`): it reports what
/// the test says, at once, on the test's thread.
///
/// ```swift
/// let path = ManualNetworkPath()                 // usable
/// var options = SegmentsClient.Options(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler))
/// options.networkPath = path
/// // … configure …
/// path.goOffline()                               // nothing is sent from now on
/// try client.trackEvent(properties: [:], timestamp: nil, eventType: "view")
/// path.goOnline()                                // the queue is flushed
/// ```
public final class ManualNetworkPath: NetworkPath {
    private let observers = ObserverList<NetworkPathStatus>()
    private let current: Locked<NetworkPathStatus>

    /// A path reporting `status` (usable by default) until the test changes it.
    public init(_ status: NetworkPathStatus = .usable) {
        current = Locked(status)
    }

    /// Registers `handler` and tells it the current status at once, on the calling thread.
    public func observe(_ handler: @escaping @Sendable (NetworkPathStatus) -> Void) -> LifecycleObservation {
        let observation = observers.add(handler)
        handler(current.value)
        return observation
    }

    /// The status reported last.
    public var status: NetworkPathStatus { current.value }

    /// How many observations are live.
    public var observerCount: Int { observers.count }

    /// Reports `status` to every live handler, on the calling thread, outside the lock, even when
    /// it is the status reported last (the platform may repeat itself).
    public func post(_ status: NetworkPathStatus) {
        current.withLock { $0 = status }
        observers.notify(status)
    }

    /// Reports no usable path.
    public func goOffline() { post(.unusable) }

    /// Reports a usable path.
    public func goOnline() { post(.usable) }
}
