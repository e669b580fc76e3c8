/// A registration with an app-lifecycle port, or a request made through one: it ends once, when
/// ``cancel()`` is called or when it is released, whichever comes first.
///
/// Ports that forward the platform's signals (``AppLifecycle``, ``ProtectedDataAvailability``,
/// ``NetworkPath``) return
/// one per observation, and ``AppLifecycle`` one per request for background execution time
/// (``BackgroundTimeRequest``), so an observer that goes away, or a request nobody ends, cannot be
/// left behind: on iOS a background task that is never ended gets the app killed.
public final class LifecycleObservation: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    /// An observation that runs `onCancel` once, when cancelled or released.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// Ends the observation (or the request); later calls do nothing.
    public func cancel() {
        let cancel = onCancel.withLock { onCancel in
            defer { onCancel = nil }
            return onCancel
        }
        cancel?()
    }

    /// Whether ``cancel()`` has run (or the observation was made ended).
    public var isCancelled: Bool { onCancel.withLock { $0 == nil } }

    deinit {
        cancel()
    }
}

/// One registration of ``ProtectedDataAvailability/observeAvailability(_:)``.
public typealias ProtectedDataObservation = LifecycleObservation

/// One request for background execution time (``AppLifecycle/beginBackgroundTime(named:expiration:)``):
/// ``LifecycleObservation/cancel()`` ends it, and so does releasing it.
public typealias BackgroundTimeRequest = LifecycleObservation
