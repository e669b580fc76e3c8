import Foundation
import SegmentsDomain

/// Every decision of the tracking pipeline, as a value (see Behaviour E1–E6, R2, R3).
///
/// Like ``SegmentationStateMachine``, each event (a public call, the queue finishing its load, a
/// timer, an upload coming back) is one `mutating` transition returning the ``Action``s it
/// decided; ``TrackingPipeline`` holds the machine under its lock and carries the actions out after
/// releasing it. The machine does no I/O and runs nobody's code.
struct TrackingStateMachine: Sendable {
    /// Where the pipeline is in its life (see Behaviour R3).
    enum Phase: Sendable, Equatable {
        /// The stored queue is being read on the storage queue; items tracked meanwhile are kept
        /// in ``trackedWhileLoading`` and flushes wait.
        case loading
        /// The queue is in memory.
        case running
        /// Stopped: items are refused, timers are gone.
        case stopped
    }

    /// Identifies a scheduled timer; one that fires after it was replaced does nothing.
    struct TimerID: Hashable, Sendable {
        let rawValue: Int
    }

    /// A flush's completion handler.
    typealias Waiter = @Sendable (FlushResult) -> Void

    /// What the pipeline carries out once its lock is released.
    enum Action: Sendable {
        /// Start the upload loop (a flush began).
        case startUploadLoop
        case scheduleTimer(TimerID, after: TimeInterval)
        case cancelTimer(TimerID)
        /// Call flush completions with the result.
        case complete([Waiter], FlushResult)
        /// Sync the journal on the storage queue (group commit, see Behaviour R2).
        case sync
        case log(LogLevel, String)
    }

    let capacity: Int
    let retryPolicy: RetryBackoff
    let maxPermanentFailures: Int

    var phase: Phase = .loading
    var mode: FlushingMode
    var items = PendingItems()
    /// Items accepted while the stored queue was loading, in call order (see Behaviour R3).
    var trackedWhileLoading: [TrackedEvent] = []
    /// Appends admitted under the cap whose write has not come back yet.
    var appendsInProgress = 0
    var flushing = false
    /// The upload loop's position in ``items``: every item before it was tried in this flush.
    var cursor = 0
    var uploaded = 0
    var waiters: [Waiter] = []
    var periodicTimer: TimerID?
    /// The backoff after a transient or authorization failure (see Behaviour E3): immediate uploads wait
    /// for it; a success or switching to `.manual` ends it (E2).
    var retryTimer: TimerID?
    var retryAttempt = 0
    var syncPending = false
    var nextTimer = 0

    init(mode: FlushingMode, capacity: Int, retry: RetryBackoff, maxPermanentFailures: Int) {
        self.mode = mode
        self.capacity = capacity
        self.retryPolicy = retry
        self.maxPermanentFailures = maxPermanentFailures
    }

    /// Items waiting, the ones tracked during the load included.
    var queuedCount: Int { items.count + trackedWhileLoading.count }

    private mutating func makeTimer() -> TimerID {
        nextTimer += 1
        return TimerID(rawValue: nextTimer)
    }

    // MARK: Tracking

    /// Admits one item before it is written (see Behaviour E6 capacity, A3): throws when stopped or full.
    mutating func admit() throws(SegmentsError) {
        guard phase != .stopped else { throw SegmentsError.stopped }
        guard queuedCount + appendsInProgress < capacity else {
            throw SegmentsError(
                .storage,
                "The event queue is full (\(capacity) items wait for upload); the event was not queued. Flush, or raise the capacity")
        }
        appendsInProgress += 1
    }

    /// The admitted write failed: nothing was queued.
    mutating func appendFailed() {
        appendsInProgress -= 1
    }

    /// The admitted item is in the journal: queue it, upload it in immediate mode, and make sure a
    /// sync follows (group commit, see Behaviour R2).
    mutating func appended(_ event: TrackedEvent) -> [Action] {
        appendsInProgress -= 1
        var actions: [Action] = []
        if !syncPending {
            syncPending = true
            actions.append(.sync)
        }
        switch phase {
        case .stopped:
            // On disk already: the next start uploads it.
            return actions
        case .loading:
            trackedWhileLoading.append(event)
        case .running:
            items.append(event)
            if mode == .immediate, retryTimer == nil { beginFlush(&actions) }
        }
        return actions
    }

    /// The sync is about to run: items appended from now on need another one.
    mutating func syncStarting() {
        syncPending = false
    }

    /// The stored queue was read (see Behaviour R3): items tracked meanwhile follow it in call order
    /// (an item already in the file is not queued twice); the mode's timers start and flushes
    /// asked for meanwhile begin.
    mutating func loaded(_ stored: [TrackedEvent]) -> [Action] {
        guard phase == .loading else { return [] }
        phase = .running
        for event in stored { items.append(event) }
        for event in trackedWhileLoading where !items.contains(event.id) { items.append(event) }
        trackedWhileLoading = []
        var actions = applyMode()
        if !waiters.isEmpty { beginFlush(&actions) }
        return actions
    }

    // MARK: Modes and flushes

    /// Switches the mode at once (see Behaviour E2): `.manual` also cancels a pending retry.
    mutating func setMode(_ newMode: FlushingMode) -> [Action] {
        mode = newMode
        guard phase == .running else { return [] }
        return applyMode()
    }

    private mutating func applyMode() -> [Action] {
        var actions: [Action] = []
        if let periodicTimer { actions.append(.cancelTimer(periodicTimer)) }
        periodicTimer = nil
        switch mode {
        case .immediate:
            if !items.isEmpty, retryTimer == nil { beginFlush(&actions) }
        case .periodic(let seconds):
            schedulePeriodic(every: seconds, &actions)
        case .manual:
            if let retryTimer {
                actions.append(.cancelTimer(retryTimer))
                self.retryTimer = nil
            }
        }
        return actions
    }

    private mutating func schedulePeriodic(every seconds: TimeInterval, _ actions: inout [Action]) {
        let timer = makeTimer()
        periodicTimer = timer
        actions.append(.scheduleTimer(timer, after: max(seconds, 1)))
    }

    /// A flush was asked for (see Behaviour E5): it joins a running one; while loading it waits for the load.
    mutating func flush(_ waiter: @escaping Waiter) -> [Action] {
        guard phase != .stopped else {
            return [.complete([waiter], .failure(SegmentsError.stopped))]
        }
        waiters.append(waiter)
        var actions: [Action] = []
        if phase == .running { beginFlush(&actions) }
        return actions
    }

    /// A timer fired: the periodic flush re-arms itself; a retry ends the backoff and flushes.
    mutating func timerFired(_ timer: TimerID) -> [Action] {
        var actions: [Action] = []
        guard phase == .running else { return actions }
        if timer == periodicTimer, case .periodic(let seconds) = mode {
            schedulePeriodic(every: seconds, &actions)
            if !items.isEmpty { beginFlush(&actions) }
        } else if timer == retryTimer {
            retryTimer = nil
            if !items.isEmpty { beginFlush(&actions) }
        }
        return actions
    }

    private mutating func beginFlush(_ actions: inout [Action]) {
        guard !flushing else { return }
        flushing = true
        uploaded = 0
        cursor = 0
        actions.append(.startUploadLoop)
    }

    // MARK: The upload loop

    /// The oldest item not yet tried in this flush; when there is none the flush ends in the same
    /// step, so an item queued meanwhile is never stranded.
    mutating func nextUpload() -> (TrackedEvent?, [Action]) {
        if phase == .running, let (event, next) = items.first(atOrAfter: cursor) {
            cursor = next
            return (event, [])
        }
        flushing = false
        let done = waiters
        waiters = []
        return (nil, done.isEmpty ? [] : [.complete(done, .success(uploaded))])
    }

    /// The backend accepted `id`: it leaves the queue and any pending backoff ends (see Behaviour E2).
    mutating func uploadSucceeded(_ id: TrackedEvent.ID) -> [Action] {
        items.remove(id)
        uploaded += 1
        retryAttempt = 0
        guard let retryTimer else { return [] }
        self.retryTimer = nil
        return [.cancelTimer(retryTimer)]
    }

    /// A transient or authorization failure (see Behaviour E3): the flush ends, every item stays, and the
    /// whole queue waits for a backoff unless flushing is manual.
    mutating func uploadPaused(by failure: SegmentsError, random: Double) -> [Action] {
        flushing = false
        var actions: [Action] = [.log(.warning, "Tracking: Upload failed, will retry: \(failure)")]
        let done = waiters
        waiters = []
        if phase == .running, mode != .manual {
            retryAttempt += 1
            let delay = retryPolicy.delay(attempt: retryAttempt, random: random, retryAfter: failure.retryAfter)
            if let retryTimer { actions.append(.cancelTimer(retryTimer)) }
            let timer = makeTimer()
            retryTimer = timer
            actions.append(.scheduleTimer(timer, after: delay))
        }
        if !done.isEmpty { actions.append(.complete(done, .failure(failure))) }
        return actions
    }

    /// A permanent failure of `event` (see Behaviour E3): counted; the item is dropped at the limit.
    /// Returns the updated item, and whether it was dropped.
    mutating func uploadFailedPermanently(_ event: TrackedEvent, _ failure: SegmentsError) -> (TrackedEvent, Bool, [Action]) {
        var failed = event
        failed.failedAttempts += 1
        let drop = failed.failedAttempts >= maxPermanentFailures
        if drop {
            items.remove(event.id)
            return (failed, true, [.log(.error, "Tracking: Dropped an item after \(failed.failedAttempts) failed uploads: \(failure)")])
        }
        items.update(failed)
        return (failed, false, [
            .log(.warning, "Tracking: Upload failed (\(failed.failedAttempts) of \(maxPermanentFailures) tries): \(failure)")
        ])
    }

    /// Stops: timers end, waiting flushes fail with `.stopped`, items stay on disk.
    mutating func stop() -> [Action] {
        phase = .stopped
        var actions: [Action] = []
        if let periodicTimer { actions.append(.cancelTimer(periodicTimer)) }
        if let retryTimer { actions.append(.cancelTimer(retryTimer)) }
        periodicTimer = nil
        retryTimer = nil
        let done = waiters
        waiters = []
        if !done.isEmpty { actions.append(.complete(done, .failure(SegmentsError.stopped))) }
        return actions
    }
}
