import Foundation

/// The SDK's one lock type: a value guarded by a mutex.
///
/// Used where an API must stay synchronous (listener registration from any thread keeps call
/// order) and for test doubles. Audited: the value is only reachable inside `withLock`, so the
/// `@unchecked Sendable` is sound for any `Sendable` value.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value

    /// Guards `value`.
    package init(_ value: Value) {
        self.storage = value
    }

    /// Runs `body` with exclusive access to the value. `body` must not call back into this lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// A copy of the value.
    package var value: Value {
        withLock { $0 }
    }
}
