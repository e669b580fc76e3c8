import Foundation

/// Lets a listener's handler run only while its registration lasts.
///
/// Closing waits for a handler that is running on the delivery queue, so once a removal returns
/// the handler is never called again (SPEC D7) — the promise an app needs to remove a listener in
/// `deinit`. The lock is recursive so a handler may remove its own listener. Audited: the flag is
/// only touched under the lock; the engine closes gates outside its own lock, so a handler that
/// calls back into the engine cannot deadlock against a removal.
final class ListenerGate: @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private var isOpen = true

    /// Runs `body` if the gate is still open, holding the gate for its duration.
    func run(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if isOpen { body() }
    }

    /// Closes the gate, after any running `body` has finished.
    func close() {
        lock.lock()
        isOpen = false
        lock.unlock()
    }
}
