import Foundation
import SegmentsDomain

#if canImport(Testing)
    import Testing
#endif

/// One virtual timeline that is both ``SegmentsClock`` and ``SegmentsScheduler``: time moves only when a test
/// calls ``advance(by:)``.
///
/// Its ``uptime()`` is the virtual time elapsed since it was created; its wall time ``now()``
/// follows the same timeline but can also be set like a user setting the device's clock
/// (``moveWallClock(by:)``), which moves neither ``uptime()`` nor any scheduled deadline (Behaviour
/// T10 in `Docs/Behaviour.md`).
///
/// Work is registered synchronously by `schedule(after:_:)`, so nothing can race it.
/// `advance(by:)` runs every piece of work that falls due, in deadline order (ties in the order
/// they were scheduled), and waits for each to finish — or to park in ``sleep(for:)`` — before it
/// runs the next, so a test sees the same interleaving on every run.
///
/// ```swift
/// let scheduler = TestScheduler()
/// scheduler.schedule(after: 5) { await model.reload() }
/// await scheduler.advance(by: 4.9)   // nothing runs
/// await scheduler.advance(by: 0.1)   // reload() runs and is awaited
/// #expect(scheduler.pendingWorkCount == 0)
/// ```
///
/// - Important: As the *scheduler* of an SDK under test it runs nothing until the test advances it:
///   a fetch or an upload stays pending, even one due now, until ``advance(by:)`` (or
///   ``runUntilIdle(limit:)``) is called, so `try await user.fetchQualifiedSegments()` (or
///   `getSegments`) with nothing advancing waits forever. When a test is about outcomes rather than
///   timing, pass `ImmediateSegmentsScheduler()` as the scheduler and this as the **clock** only: work
///   starts at once and cache entries still age on virtual time.
///
///   ```swift
///   let clock = TestScheduler()
///   let audiences = AudienceSegmentsClient(
///       fetcher: fetcher, candidateSegments: ["seg-1"],
///       options: .testing(runtime: SegmentsRuntime(scheduler: ImmediateSegmentsScheduler(), clock: clock)))
///   try await audiences.createUserContext(userId: "user123").fetchQualifiedSegments()
///   await clock.advance(by: 600)      // the cached answer expires
///   ```
///
///   A scheduler that has work waiting while nothing advances it for a while says so, at the line
///   that made it, naming the waiting work and the fix: under XCTest (which has no time limit, so
///   such a test would hang for good) it fails the test; under Swift Testing it records a warning
///   before the test's time limit ends the test with a bare time-out (a warning, because a
///   scheduler a finished test leaked may still hold work). See
///   ``init(now:reportingStallsAfter:fileID:filePath:line:column:)``.
public final class TestScheduler: SegmentsClock, SegmentsScheduler, Sendable {
    private struct Item: Sendable {
        let deadline: Date
        let sequence: Int
        let run: @Sendable () -> Void
    }

    private struct State: Sendable {
        /// The virtual timeline (deadlines are on it).
        var now: Date
        /// How far the wall clock was set away from the timeline.
        var wallClockOffset: TimeInterval = 0
        var nextSequence = 0
        var pending: [Item] = []
        /// Work started by `advance` that has neither finished nor parked in `sleep`.
        var running = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Real time of the last sign of progress: an advance, or work arriving with none waiting.
        var lastProgress = Date()
        /// Whether the stall was reported (once per scheduler).
        var stallReported = false
    }

    @TaskLocal private static var isScheduledWork = false

    private let state: Locked<State>
    private let origin: Date

    /// A timeline starting at `now` (by default 2023-11-14 22:13:20 UTC, a fixed moment).
    ///
    /// - Parameters:
    ///   - stallSeconds: how long (real time) work may wait on this scheduler while nothing
    ///     advances it before it reports, at the line that made the scheduler, a message naming
    ///     the waiting work and the fix (advance it): an XCTest failure, or a Swift Testing
    ///     warning. `nil`: half the running Swift Testing test's time limit (so the message comes
    ///     before the bare time-out), else 30 s. It reports once, and watches while the scheduler
    ///     lives, under Swift Testing at most twice `stallSeconds`.
    ///   - fileID, filePath, line, column: where the scheduler is made (the defaults capture it).
    public init(
        now: Date = Date(timeIntervalSince1970: 1_700_000_000), reportingStallsAfter stallSeconds: TimeInterval? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        state = Locked(State(now: now))
        origin = now
        let site = TestSourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
        let threshold = stallSeconds ?? Self.defaultStallSeconds()
        let watchEnds = site.framework == .swiftTesting ? Date().addingTimeInterval(2 * threshold) : .distantFuture
        // A task made here inherits the running test (Swift Testing's `Test.current`), so the
        // report it may make is that test's. It ends when the scheduler is released.
        Task { [weak self] in
            while Date() < watchEnds {
                try? await Task.sleep(nanoseconds: UInt64(min(max(threshold / 4, 0.05), 1) * 1e9))
                guard let scheduler = self else { return }
                if let report = scheduler.stallReport(after: threshold, site: site) {
                    site.fail(report, warningUnderSwiftTesting: true)
                    return
                }
            }
        }
    }

    /// Half the running Swift Testing test's time limit, else 30 s.
    private static func defaultStallSeconds() -> TimeInterval {
        #if canImport(Testing)
            if #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *), let limit = Test.current?.timeLimit {
                let (seconds, attoseconds) = limit.components
                return (Double(seconds) + Double(attoseconds) / 1e18) / 2
            }
        #endif
        return 30
    }

    /// The message of a stall, when work has waited `threshold` seconds with nothing advancing
    /// the scheduler and none was reported yet; marks it reported.
    private func stallReport(after threshold: TimeInterval, site: TestSourceSite) -> String? {
        state.withLock { state -> String? in
            guard !state.stallReported else { return nil }
            guard !state.pending.isEmpty, state.running == 0 else {
                // Nothing waits, or work is running: not a scheduler nobody advances.
                state.lastProgress = Date()
                return nil
            }
            let waited = Date().timeIntervalSince(state.lastProgress)
            guard waited >= threshold else { return nil }
            state.stallReported = true
            let now = state.now
            let due = state.pending.map { $0.deadline.timeIntervalSince(now) }.sorted()
                .map { $0 <= 0 ? "due now" : "due in \(Self.seconds($0))" }
            return """
                The TestScheduler made at \(site.fileID):\(site.line) has \(due.count) piece(s) of work waiting \
                (\(due.joined(separator: ", "))) and nothing advanced it for \(Self.seconds(waited)) of real time. \
                Work on a TestScheduler runs only when the test advances it, so an `await` on a read or \
                flush that needs that work never returns. Fix: advance the scheduler while the read is \
                awaited (start the read in a Task, then `await scheduler.advance(by:)` or \
                `runUntilIdle()`), or pass `ImmediateSegmentsScheduler()` as the scheduler and this \
                TestScheduler as the clock only.
                """
        }
    }

    private static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(String(format: "%.1f", value)) s"
    }

    /// The virtual wall time: the timeline, plus any ``moveWallClock(by:)``.
    public func now() -> Date {
        state.withLock { $0.now.addingTimeInterval($0.wallClockOffset) }
    }

    /// Virtual seconds elapsed since this scheduler was created; wall-clock moves don't change it.
    public func uptime() -> TimeInterval {
        state.withLock { $0.now.timeIntervalSince(origin) }
    }

    /// Sets the wall clock `seconds` forward (or back, when negative), as a user changing the
    /// device's time would: ``now()`` jumps, while ``uptime()`` and scheduled work stay put.
    public func moveWallClock(by seconds: TimeInterval) {
        state.withLock { $0.wallClockOffset += seconds }
    }

    /// Registers `work` to run when virtual time reaches now + `delay`.
    @discardableResult
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () async -> Void) -> ScheduledWork {
        let sequence = enqueue(after: delay) { [weak self] in self?.start(work) }
        return ScheduledWork { [weak self] in
            self?.state.withLock { $0.pending.removeAll { $0.sequence == sequence } }
        }
    }

    /// Suspends the caller until virtual time has advanced by `delay`.
    ///
    /// Called from scheduled work, the work counts as parked, so `advance(by:)` moves on.
    public func sleep(for delay: TimeInterval) async {
        let tracked = Self.isScheduledWork
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            enqueue(after: delay) { [weak self] in
                if tracked { self?.state.withLock { $0.running += 1 } }
                continuation.resume()
            }
            if tracked { finishRunning() }
        }
    }

    /// Moves virtual time forward by `interval`, running all work that falls due on the way, in
    /// deadline order, each to completion (or until it parks in ``sleep(for:)``).
    /// `advance()` with no argument runs the work that is due now.
    public func advance(by interval: TimeInterval = 0) async {
        state.withLock { $0.lastProgress = Date() }
        let target = timeline().addingTimeInterval(max(interval, 0))
        while let item = takeNext(dueBy: target) {
            item.run()
            await waitUntilIdle()
        }
        state.withLock { if $0.now < target { $0.now = target } }
    }

    /// Advances to the deadline of each pending piece of work in turn until none is left, or
    /// until `limit` seconds of virtual time have passed (periodic work never ends by itself).
    public func runUntilIdle(limit: TimeInterval = 3600) async {
        let end = timeline().addingTimeInterval(limit)
        while let next = state.withLock({ $0.pending.map(\.deadline).min() }), next <= end {
            await advance(by: max(next.timeIntervalSince(timeline()), 0))
        }
    }

    /// How many pieces of work (and sleepers) are waiting for their deadline.
    public var pendingWorkCount: Int {
        state.withLock { $0.pending.count }
    }

    /// The deadlines of waiting work, earliest first, as seconds from now.
    public var pendingDelays: [TimeInterval] {
        state.withLock { state in state.pending.map { $0.deadline.timeIntervalSince(state.now) }.sorted() }
    }

    // MARK: - Internals

    private func timeline() -> Date {
        state.withLock { $0.now }
    }

    @discardableResult
    private func enqueue(after delay: TimeInterval, _ run: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            if state.pending.isEmpty && state.running == 0 { state.lastProgress = Date() }
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.pending.append(
                Item(deadline: state.now.addingTimeInterval(max(delay, 0)), sequence: sequence, run: run))
            return sequence
        }
    }

    private func takeNext(dueBy target: Date) -> Item? {
        state.withLock { state in
            guard
                let index = state.pending.indices.min(by: {
                    (state.pending[$0].deadline, state.pending[$0].sequence)
                        < (state.pending[$1].deadline, state.pending[$1].sequence)
                }),
                state.pending[index].deadline <= target
            else { return nil }
            let item = state.pending.remove(at: index)
            if state.now < item.deadline { state.now = item.deadline }
            return item
        }
    }

    private func start(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task {
            await Self.$isScheduledWork.withValue(true) { await work() }
            self.finishRunning()
        }
    }

    private func finishRunning() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        waiters.forEach { $0.resume() }
    }

    private func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.running == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
