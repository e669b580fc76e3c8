/// Tells the SDK whether protected data is available, and when it becomes available: on Apple
/// platforms, when the device is unlocked for the first time after a restart, files protected
/// until then can be read and written again (<doc:Behaviour#P8>).
///
/// A storage refusal (`EPERM`/`EACCES`) is transient only while this port reports protected data
/// unavailable: the client then keeps what it has in memory and, when this port signals, redoes on
/// its storage queue the loads and saves that were refused. Any other refusal is a permission
/// problem and a `.storage` error. The live implementation, `SystemProtectedDataAvailability`,
/// follows UIKit on iOS and visionOS and reports protected data always available elsewhere (those
/// platforms have no first-unlock signal, so a refusal there never waits for one); tests use
/// `ManualProtectedDataAvailability` from `SegmentsTesting`.
///
/// The app's other lifecycle signals (active, background, foreground) and its requests for
/// background time come through ``AppLifecycle``; both ports return a ``LifecycleObservation``.
public protocol ProtectedDataAvailability: Sendable {
    /// Calls `handler`, on any thread, each time protected data becomes available, until the
    /// returned observation is cancelled or released.
    func observeAvailability(_ handler: @escaping @Sendable () -> Void) -> ProtectedDataObservation

    /// Whether protected data is available now (<doc:Behaviour#P8>). Asked, from any thread, only
    /// when the system refuses a stored file: `false` makes the refusal transient, `true` a
    /// `.storage` error. Must answer at once, without waiting for another thread.
    ///
    /// The default answers `true`, right for every platform without data protection: a port that
    /// signals ``observeAvailability(_:)`` should answer it too.
    var isProtectedDataAvailable: Bool { get }
}

extension ProtectedDataAvailability {
    /// `true`: protected data is taken to be available, so every refusal of a stored file is a
    /// `.storage` error (<doc:Behaviour#P8>).
    public var isProtectedDataAvailable: Bool { true }
}
