#if canImport(Testing)
    import Foundation
    import Testing

    /// Waits until the work queued on `queue` so far has run, at most `seconds` times
    /// ``Hang/timeScale``; when it has not (a deadlocked queue) records an issue naming the queue
    /// and returns `false`, where `queue.sync {}` would wait forever and keep the whole test run
    /// from ending.
    ///
    /// ```swift
    /// client.addListener(category: .discovery()) { segments in … }
    /// await scheduler.advance(by: 5)
    /// drained(deliveryQueue)   // the handler calls queued so far have run
    /// ```
    @discardableResult
    public func drained(
        _ queue: DispatchQueue, within seconds: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let limit = Hang.scaled(seconds)
        let reached = DispatchSemaphore(value: 0)
        queue.async { reached.signal() }
        guard reached.wait(timeout: .now() + limit) == .success else {
            recordUndrained(queue, within: limit, sourceLocation)
            return false
        }
        return true
    }

    /// The form of ``drained(_:within:sourceLocation:)`` for async code: the task is suspended,
    /// not its thread. A blocked thread of Swift's cooperative pool (two on a 2-core machine) is
    /// one the SDK's tasks and the other tests cannot use while the queue works through disk
    /// writes; suspended, the task leaves it to them.
    ///
    /// ```swift
    /// await scheduler.advance(by: 5)
    /// await drained(deliveryQueue)   // the handler calls queued so far have run
    /// ```
    @discardableResult
    public func drained(
        _ queue: DispatchQueue, within seconds: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        let limit = Hang.scaled(seconds)
        let answered = LockedValue(false)
        let reached = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: @Sendable (Bool) -> Void = { reached in
                let first = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { continuation.resume(returning: reached) }
            }
            queue.async { answer(true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { answer(false) }
        }
        if !reached { recordUndrained(queue, within: limit, sourceLocation) }
        return reached
    }

    /// The issue both forms of `drained` record for a queue that did not drain in time.
    private func recordUndrained(_ queue: DispatchQueue, within seconds: TimeInterval, _ sourceLocation: SourceLocation) {
        Issue.record("the queue \(queue.label) did not drain within \(Int(seconds)) s (deadlocked?)", sourceLocation: sourceLocation)
    }
#endif
