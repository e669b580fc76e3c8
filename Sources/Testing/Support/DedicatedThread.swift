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
/// recursion too deep for an iPhone's secondary threads (Behaviour P9 in `Docs/Behaviour.md`): a
/// test that decodes or encodes at a depth limit on such a thread proves the limit fits. A call
/// that overflows the stack crashes the test process, which fails the run.
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

/// A task executor that runs every job on one thread of its own, in the order they are enqueued.
///
/// Its thread never ends: a task made with the executor as its preference can still enqueue a job
/// after the work that made it returned (the SDK's own tasks outlive a test), and an executor that
/// stopped would drop that job and leave whoever awaits it waiting. One idle thread per executor
/// is the price.
///
/// ```swift
/// let executor = DedicatedThreadExecutor(stackSize: appleSecondaryThreadStackSize)
/// let value = try await Task(executorPreference: executor) { try await uploader.upload(event) }.value
/// ```
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // The fields are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var thread: pthread_t?
    private var runCount = 0

    /// An executor whose thread has a stack of `stackSize` bytes (the platform's default when nil).
    public init(stackSize: Int? = nil) {
        let thread = Thread { [self] in
            pthread_setspecific(dedicatedThreadKey, UnsafeRawPointer(bitPattern: 1))
            condition.lock()
            self.thread = pthread_self()
            condition.unlock()
            run()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Queues `job` for the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    /// Whether the caller runs on the executor's thread.
    public var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Whether the caller runs on the thread of a `DedicatedThreadExecutor` (any of them): to prove
    /// that blocking work stays off the cooperative pool.
    public static var currentThreadIsDedicated: Bool { pthread_getspecific(dedicatedThreadKey) != nil }

    /// How many jobs the thread has run.
    public var jobsRun: Int {
        condition.lock()
        defer { condition.unlock() }
        return runCount
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            runCount += 1
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Marks the threads of every ``DedicatedThreadExecutor`` (see `currentThreadIsDedicated`).
private let dedicatedThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
