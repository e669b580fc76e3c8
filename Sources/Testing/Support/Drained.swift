#if canImport(Testing)
    import Foundation
    import Testing

    /// Waits until the work queued on `queue` so far has run, at most `seconds`; when it has not (a
    /// deadlocked queue) records an issue naming the queue and returns `false`, where
    /// `queue.sync {}` would wait forever and keep the whole test run from ending.
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
        let reached = DispatchSemaphore(value: 0)
        queue.async { reached.signal() }
        guard reached.wait(timeout: .now() + seconds) == .success else {
            Issue.record("the queue \(queue.label) did not drain within \(Int(seconds)) s (deadlocked?)", sourceLocation: sourceLocation)
            return false
        }
        return true
    }
#endif
