import SegmentsDomain

/// A value guarded by a lock, for the state of your own test doubles and recorders: listeners,
/// completion handlers and the SDK's ports are called from other threads than the test's, and a
/// `Sendable` double must guard what it records.
///
/// The value is reachable only inside ``withLock(_:)`` (or as a copy through ``value``), so a
/// class holding its state in a `LockedValue` is `Sendable` without `@unchecked`.
///
/// ```swift
/// final class Told: Sendable {
///     private let lists = LockedValue<[[Segment]]>([])
///     func record(_ list: [Segment]) { lists.withLock { $0.append(list) } }
///     var all: [[Segment]] { lists.value }
/// }
/// ```
///
/// The lock is not reentrant: calling `withLock` (or `value`) of the same `LockedValue` inside
/// `withLock` deadlocks. Keep the bodies short and never await in them (they are synchronous).
public final class LockedValue<Value: Sendable>: Sendable {
    private let locked: Locked<Value>

    /// Guards `value`.
    public init(_ value: Value) {
        locked = Locked(value)
    }

    /// Runs `body` with exclusive access to the value and returns what it returns; changes made
    /// to the value are kept.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try locked.withLock(body)
    }

    /// A copy of the value, read under the lock. There is no setter on purpose: change the value
    /// with ``withLock(_:)`` (`count.withLock { $0 += 1 }`), so a read-modify-write is one step.
    public var value: Value { locked.value }
}
