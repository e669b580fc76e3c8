import Foundation
import SegmentsDomain

/// Lets a listener's handler start only while its registration lasts (see Behaviour D7).
///
/// Closing never waits: it flips a flag and returns, so removing a listener, stopping or
/// re-configuring cannot block on a running handler (a handler that synchronously dispatches to
/// the main queue while the main thread removes it would otherwise deadlock). Once ``close()``
/// has returned, ``run(_:)`` starts no new call; a call that started before may finish. No lock
/// is held while the handler runs, so a handler may remove its own listener or call the SDK.
final class ListenerGate: Sendable {
    private let isOpen = Locked(true)

    /// Runs `body` if the gate is still open. The flag is read under the lock, the body runs
    /// after it is released.
    func run(_ body: () -> Void) {
        guard isOpen.value else { return }
        body()
    }

    /// Closes the gate at once; returns without waiting for a running body.
    func close() {
        isOpen.withLock { $0 = false }
    }
}
