import Foundation

/// Runs a blocking call on a thread of its own and awaits its result.
///
/// On Linux, Swift's cooperative thread pool and `DispatchQueue.global()` share the same few
/// threads (as many as there are CPUs). A test that blocks one of them — waiting on a semaphore, or
/// calling a blocking SDK method such as the user context's `fetchQualifiedSegments(timeout:)` —
/// takes a thread the SDK's own tasks need; on a 2-core machine two such tests at once stall every
/// other test until their waits time out. This helper uses neither: the call runs on a new
/// `Thread`, and the awaiting task is suspended, not blocked.
///
/// ```swift
/// let segments = try await onDedicatedThread { try user.fetchQualifiedSegments(timeout: 5) }
/// ```
public func onDedicatedThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// The non-throwing form of `onDedicatedThread(_:)`: for a blocking call that cannot fail.
public func onDedicatedThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
