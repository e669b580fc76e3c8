/// Tells the SDK when protected data becomes available: on Apple platforms, when the device is
/// unlocked for the first time after a restart, files protected until then can be read and
/// written again (<doc:Behaviour#P8>).
///
/// A storage refusal because protected data is not available is transient: the client keeps what
/// it has in memory and, when this port signals, redoes on its storage queue the loads and saves
/// that were refused. The live implementation, `SystemProtectedDataAvailability`, observes
/// `UIApplication.protectedDataDidBecomeAvailableNotification` on iOS and visionOS and never
/// signals elsewhere; tests trigger `ManualProtectedDataAvailability` from `SegmentsTesting`.
///
/// The app's other lifecycle signals (active, background, foreground) and its requests for
/// background time come through ``AppLifecycle``; both ports return a ``LifecycleObservation``.
public protocol ProtectedDataAvailability: Sendable {
    /// Calls `handler`, on any thread, each time protected data becomes available, until the
    /// returned observation is cancelled or released.
    func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation
}
