/// Tells the SDK when protected data becomes available: on Apple platforms, when the device is
/// unlocked for the first time after a restart, files protected until then can be read and
/// written again (see Behaviour P8).
///
/// A storage refusal because protected data is not available is transient: the client keeps what
/// it has in memory and, when this port signals, redoes on its storage queue the loads and saves
/// that were refused. The live implementation, `SystemProtectedDataAvailability`, observes
/// `UIApplication.protectedDataDidBecomeAvailableNotification` on iOS and visionOS and never
/// signals elsewhere; tests trigger `ManualProtectedDataAvailability` from `SegmentsTesting`.
///
/// A small port on purpose: the app-lifecycle signals a later version observes are meant to join
/// it.
public protocol ProtectedDataAvailability: Sendable {
    /// Calls `handler`, on any thread, each time protected data becomes available, until the
    /// returned observation is cancelled or released.
    func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation
}

/// One registration of ``ProtectedDataAvailability/observeAvailability(_:)``: it ends when cancelled
/// or released.
public final class ProtectedDataObservation: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    /// An observation that runs `onCancel` once, when cancelled or released.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// Ends the observation; later calls do nothing.
    public func cancel() {
        let cancel = onCancel.withLock { onCancel in
            defer { onCancel = nil }
            return onCancel
        }
        cancel?()
    }

    deinit {
        cancel()
    }
}
