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
/// `onDedicatedThread(stackSize:_:)` runs the call on a stack of a given size.
///
/// ```swift
/// let segments = try await onDedicatedThread { try user.fetchQualifiedSegments(timeout: 5) }
/// ```
public func onDedicatedThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        startThread(stackSize: nil) { continuation.resume(with: Result { try body() }) }
    }
}

/// The non-throwing form of `onDedicatedThread(_:)`: for a blocking call that cannot fail.
public func onDedicatedThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        startThread(stackSize: nil) { continuation.resume(returning: body()) }
    }
}

/// Runs a call on a thread of its own with a stack of `stackSize` bytes and awaits its result.
///
/// ``appleSecondaryThreadStackSize`` imposes Apple's 512 KiB on Linux, whose 8 MiB default hides a
/// recursion too deep for an iPhone's secondary threads (see Behaviour P9): a test that decodes or
/// encodes at a depth limit on such a thread proves the limit fits. A call that overflows the
/// stack crashes the test process, which fails the run.
///
/// ```swift
/// let value = try await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
///     try JSONDecoder().decode(JSONValue.self, from: deepBody)
/// }
/// ```
public func onDedicatedThread<Value: Sendable>(
    stackSize: Int, _ body: @escaping @Sendable () throws -> Value
) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        startThread(stackSize: stackSize) { continuation.resume(with: Result { try body() }) }
    }
}

/// The non-throwing form of `onDedicatedThread(stackSize:_:)`.
public func onDedicatedThread<Value: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        startThread(stackSize: stackSize) { continuation.resume(returning: body()) }
    }
}

/// The stack size of a secondary thread on Apple platforms (`Thread`, Dispatch's worker threads and
/// Swift concurrency's cooperative pool): 512 KiB. Linux gives threads 8 MiB by default.
public let appleSecondaryThreadStackSize = 512 * 1024

private func startThread(stackSize: Int?, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = "SegmentsTesting.dedicated"
    if let stackSize { thread.stackSize = stackSize }
    thread.start()
}
