import Foundation

/// A value guarded by a mutex: the emulator's only lock type.
///
/// The emulator's control API is synchronous (tests call it from any thread, and the socket threads
/// call into the same state), so its state lives behind a lock rather than in an actor.
/// The `@unchecked Sendable` is sound: the stored value is only reachable inside `withLock`, which
/// holds the lock for the whole access, and `Value` itself is `Sendable`.
final class EmulatorLocked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value

    init(_ value: Value) {
        storage = value
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// A copy of the value.
    var value: Value {
        withLock { $0 }
    }
}
