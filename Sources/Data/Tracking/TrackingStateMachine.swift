import Foundation
import SegmentsDomain

/// The tracking pipeline's decisions about its queue, as a value: loading, admitting under the
/// cap, queueing, flushing, modes, backoff and stop (<doc:Behaviour#E1>–<doc:Behaviour#E6>,
/// <doc:Behaviour#R1>–<doc:Behaviour#R3>).
///
/// Not every decision is here. ``TrackingPipeline`` checks an item's content and timestamp
/// (<doc:Behaviour#E6>) before the machine admits it, and writes it; ``BackgroundTime`` decides
/// when background time is asked for and ended (<doc:Behaviour#E7>); and the pipeline's
/// `perform(_:with:on:)` decides what a failed removal, update or sync does (it logs it).
///
/// Shaped like async-http-client's `Transaction+StateMachine`: one private ``State`` whose cases
/// carry their data, so an impossible combination (a flush while loading, a retry timer after
/// stop) cannot be written down. Each event — a public call, the stored queue finishing its load,
/// a timer, an upload coming back — is one `mutating` transition returning the ``Steps`` it
/// decided; ``StateMachineDriver`` runs it under its lock and carries the steps out after
/// releasing it. A transition does no I/O, reads no clock (time and jitter come in a ``Moment``)
/// and calls none of the app's code; the pipeline does, after the lock: its uploader, its store,
/// the logger and the app's completions are reached through the actions it carries out.
///
/// The file follows the life of a pipeline: the states (loading, running, stopping, stopped),
/// then the transitions of loading, of running (tracking, modes, flushes, uploads, timers), and
/// stop — after which no upload starts, an upload already sent comes back and its item's removal
/// is written, and the pipeline is then settled: what reads its store next (the next pipeline of
/// the client on the same storage) waits for that (<doc:Behaviour#E4>, issue 32 finding 11).
struct TrackingStateMachine: DrivenStateMachine {
    /// A flush's completion handler.
    typealias FlushWaiter = @Sendable (SegmentsFlushResult) -> Void
    /// The completion handler of an exact count (answered once the stored queue is loaded).
    typealias CountWaiter = @Sendable (Int) -> Void
    /// What waits for the pipeline to be settled: stopped, its last flush ended (see
    /// ``whenSettled(_:)``).
    typealias SettleWaiter = @Sendable () -> Void

    /// What the pipeline carries out once the lock is released, in order.
    enum Action: Sendable {
        /// Upload this item (one request), then report back with ``uploadSucceeded(_:)`` or
        /// ``uploadFailed(_:_:at:)``.
        case upload(TrackedEvent)
        /// Remove the item from the stored queue, on the storage queue, in order (after a 2xx, or a
        /// drop at the failure limit: <doc:Behaviour#E3>, <doc:Behaviour#E4>).
        case remove(TrackedEvent.ID)
        /// Rewrite the item (its failure count) in the stored queue, on the storage queue, in order.
        case update(TrackedEvent)
        /// One upload succeeded: the segments reload hook (<doc:Behaviour#T3>).
        case itemUploaded
        /// Call flush completions with the result.
        case completeFlushes([FlushWaiter], SegmentsFlushResult)
        /// Call count completions with the exact count.
        case answerCounts([CountWaiter], Int)
        /// Sync the journal on the storage queue (group commit, <doc:Behaviour#R2>); the pipeline
        /// calls ``syncStarting()`` there first.
        case sync
        /// The pipeline is settled (stopped, its last flush ended, its last removal queued): run
        /// these.
        case settled([SettleWaiter])
        case log(LogLevel, String)
        /// The last flush asked for by ``finish(_:)`` ended (or the pipeline was stopped first):
        /// call these; the pipeline is stopped (<doc:Behaviour#A3>).
        case finished([FinishWaiter])
    }

    /// Told that the pipeline's last flush (``finish(_:)``) ended and the pipeline stopped.
    typealias FinishWaiter = @Sendable () -> Void

    /// The pipeline's settings, fixed for its life.
    struct Limits: Sendable {
        /// How many items may wait for upload.
        var capacity: Int
        /// The backoff after transient and authorization failures.
        var retry: RetryBackoff
        /// How many permanent failures drop an item.
        var maxPermanentFailures: Int
    }

    // MARK: - States

    fileprivate enum State: Sendable {
        /// The stored queue is being read on the storage queue (<doc:Behaviour#R3>).
        case loading(Loading)
        /// The queue is in memory.
        case running(Running)
        /// Stopped, with an upload that was already sent still out (or an item's write still to
        /// come back): items are refused, timers are gone, no upload starts and no backoff
        /// follows (<doc:Behaviour#A3>); when the upload comes back its item's removal (or failed
        /// try) is written as usual (<doc:Behaviour#E4>), and the pipeline is stopped.
        case stopping(Running)
        /// Stopped: items are refused, timers are gone, nothing more is written.
        case stopped
        /// Only while a transition changes a payload in place (no copy-on-write copy); never seen
        /// outside a transition.
        case modifying
    }

    /// Loading: what was asked for before the stored queue is in memory, in call order.
    fileprivate struct Loading: Sendable {
        /// Items accepted meanwhile, in call order; they follow the stored ones.
        var trackedMeanwhile: [TrackedEvent] = []
        /// Flushes asked for meanwhile: one flush starts for all of them once loaded.
        var flushesWaiting: [FlushWaiter] = []
        /// Exact counts asked for meanwhile: answered once loaded.
        var countsWaiting: [CountWaiter] = []
        /// No usable network path (<doc:Behaviour#N1>): carried into the running state.
        var offline = false
    }

    private var state: State = .loading(Loading())
    private var currentMode: FlushingMode
    private let limits: Limits
    /// Appends admitted under the cap whose write has not come back yet (every state).
    private var appendsInProgress = 0
    /// Whether a sync is queued that has not started yet: appends before it starts are covered.
    private var syncPending = false
    /// The last flush before the pipeline stops (``finish(_:)``, <doc:Behaviour#A3>): who waits for
    /// it; `nil` when none was asked for.
    private var lastFlushWaiters: [FinishWaiter]?
    /// Waiters of a last flush that ended with a stop: told once the pipeline is settled.
    private var finishedWaiters: [FinishWaiter] = []
    /// The items the pipeline held when it stopped, stored ones loaded after the stop and items
    /// written while it stopped included: what a stop that deletes the stored data removes from
    /// the store (<doc:Behaviour#A3>).
    private(set) var leftAtStop: [TrackedEvent.ID] = []
    /// Who waits for the pipeline to be settled (``whenSettled(_:)``).
    private var settleWaiters: [SettleWaiter] = []
    /// The next pipeline on the same store, when this one stopped while its queue loaded: flushes
    /// asked of this one from then on go there (``flush(_:)``).
    private var flushesGoTo: TrackingPipeline?

    init(mode: FlushingMode, limits: Limits) {
        self.currentMode = mode
        self.limits = limits
    }

    // MARK: - Reading

    /// The flushing mode in force (<doc:Behaviour#E2>).
    var mode: FlushingMode { currentMode }

    /// Whether the stored queue is still loading.
    var isLoading: Bool {
        if case .loading = state { return true }
        return false
    }

    /// Items waiting, from memory: while loading, those tracked since (the stored ones are not
    /// known yet); once stopped, none.
    var queuedCount: Int {
        switch state {
        case .loading(let loading): loading.trackedMeanwhile.count
        case .running(let running): running.items.count
        case .stopping, .stopped: 0
        case .modifying: preconditionFailure("Tracking: the state was read while a transition changed it")
        }
    }

    // MARK: - Loading

    /// Admits one item before it is written (<doc:Behaviour#E6> capacity, A3): throws when stopped
    /// or full.
    ///
    /// `evenIfStopped`: an item the client accepted before the pipeline was stopped (a call made
    /// before configure, queued by configure's caller while a stop raced it) is still written; it
    /// stays on disk for the next start (<doc:Behaviour#E1>, <doc:Behaviour#E4>).
    mutating func admit(evenIfStopped: Bool = false) throws(SegmentsError) {
        switch state {
        case .stopping, .stopped:
            guard evenIfStopped else { throw SegmentsError.stopped }
            appendsInProgress += 1
        case .loading, .running:
            guard queuedCount + appendsInProgress < limits.capacity else {
                throw SegmentsError(
                    .storage,
                    "The event queue is full (\(limits.capacity) items wait for upload); the event was not queued. Flush, or raise the capacity")
            }
            appendsInProgress += 1
        case .modifying:
            preconditionFailure("Tracking: admit during another transition")
        }
    }

    /// The admitted write failed: nothing was queued.
    mutating func appendFailed() -> Steps<Action> {
        appendsInProgress -= 1
        var steps = Steps<Action>()
        finishIfFlushEnded(&steps)
        return steps
    }

    /// The admitted item is in the journal: queue it (in immediate mode, upload it unless a retry
    /// waits), and make sure a sync follows (group commit, <doc:Behaviour#R2>).
    /// Returns whether the item was queued here: `false` when the pipeline stopped meanwhile.
    mutating func appended(_ event: TrackedEvent) -> (Bool, Steps<Action>) {
        appendsInProgress -= 1
        var steps = Steps<Action>()
        if !syncPending {
            syncPending = true
            steps.append(.sync)
        }
        switch state {
        case .loading, .running:
            queue(event, &steps)
            return (true, steps)
        case .stopping:
            // Admitted before the stop, written after it: on disk, for the next start (or the
            // successor adopts it); no upload starts after the stop (A3, E4).
            leftAtStop.append(event.id)
            finishIfFlushEnded(&steps)
            return (false, steps)
        case .stopped:
            leftAtStop.append(event.id)
            return (false, steps)  // on disk already: the next start uploads it (or the successor adopts it)
        case .modifying:
            preconditionFailure("Tracking: appended during another transition")
        }
    }

    /// An item that the pipeline this one replaced on the same store wrote after it had stopped
    /// (<doc:Behaviour#A4>, <doc:Behaviour#E4>): queued here unless this one already has it (read
    /// from the file).
    mutating func adopt(_ event: TrackedEvent) -> Steps<Action> {
        var steps = Steps<Action>()
        queue(event, &steps)
        return steps
    }

    /// The store was read again once protected data became available (<doc:Behaviour#P8>): the
    /// items found that this pipeline does not hold are queued behind those it holds — not one it
    /// uploaded (or dropped) whose removal is not written yet, which the read still found
    /// (<doc:Behaviour#E4>) — and, as after the first load, immediate mode uploads what is queued
    /// unless a retry waits (<doc:Behaviour#E2>).
    mutating func storedItemsRead(_ items: [TrackedEvent]) -> Steps<Action> {
        var steps = Steps<Action>()
        for event in items { queue(event, &steps) }
        if case .running = state, currentMode == .immediate {
            modifyRunning { running in
                if !running.items.isEmpty, running.retryTimer == nil { running.startFlush(joining: [], &steps) }
            }
        }
        return steps
    }

    /// Queues an item that is in the journal: while loading it follows the stored ones (the load
    /// drops it if the file had it); running, it joins the queue once and, in immediate mode,
    /// is uploaded unless a retry waits.
    private mutating func queue(_ event: TrackedEvent, _ steps: inout Steps<Action>) {
        switch state {
        case .loading:
            modifyLoading { $0.trackedMeanwhile.append(event) }
        case .running:
            let mode = currentMode
            modifyRunning { running in
                // Already queued, or uploaded (or dropped) with its removal not yet written: a
                // read of the store made meanwhile still had it (see Behaviour E4, P8).
                guard !running.items.contains(event.id), !running.removalsUnwritten.contains(event.id) else { return }
                running.items.append(event)
                if mode == .immediate, running.retryTimer == nil { running.startFlush(joining: [], &steps) }
            }
        case .stopping, .stopped:
            break
        case .modifying:
            preconditionFailure("Tracking: an item was queued during another transition")
        }
    }

    /// The sync is about to run: items appended from now on need another one.
    mutating func syncStarting() -> Steps<Action> {
        syncPending = false
        return Steps()
    }

    /// A flush was asked for (<doc:Behaviour#E5>): it joins a running one; while loading it waits
    /// for the load; once stopped it fails with `.stopped`. A pending upload backoff does not hold
    /// it back: the app asked (a failure replaces the backoff, a success ends it).
    /// `forward`: this pipeline stopped while its queue loaded and handed its flushes to the next
    /// one on the same store; a flush handed to it late (another thread's ending carried out
    /// after this one's) goes there too, as the ones it held did.
    mutating func flush(_ waiter: @escaping FlushWaiter) -> (forward: TrackingPipeline?, Steps<Action>) {
        var steps = Steps<Action>()
        switch state {
        case .loading:
            modifyLoading { $0.flushesWaiting.append(waiter) }
        case .running:
            modifyRunning { $0.startFlush(joining: [waiter], &steps) }
        case .stopping where flushesGoTo != nil, .stopped where flushesGoTo != nil:
            return (flushesGoTo, steps)
        case .stopping, .stopped:
            steps.append(.completeFlushes([waiter], .failure(SegmentsError.stopped)))
        case .modifying:
            preconditionFailure("Tracking: flush during another transition")
        }
        return (nil, steps)
    }

    /// An exact count was asked for (<doc:Behaviour#R1>): answered at once from memory when loaded,
    /// else once loaded; a stopped pipeline holds nothing (0).
    mutating func countWhenLoaded(_ waiter: @escaping CountWaiter) -> Steps<Action> {
        var steps = Steps<Action>()
        switch state {
        case .loading:
            modifyLoading { $0.countsWaiting.append(waiter) }
        case .running(let running):
            steps.append(.answerCounts([waiter], running.items.count))
        case .stopping, .stopped:
            steps.append(.answerCounts([waiter], 0))
        case .modifying:
            preconditionFailure("Tracking: count during another transition")
        }
        return steps
    }

    /// The stored queue was read (<doc:Behaviour#R3>): items tracked meanwhile follow it in call
    /// order (an item already in the file is not queued twice); counts asked for meanwhile are
    /// answered, the mode's timers start and flushes asked for meanwhile begin, as one flush.
    mutating func loaded(_ stored: [TrackedEvent]) -> Steps<Action> {
        switch state {
        case .loading(let loading):
            var items = PendingItems()
            for event in stored { items.append(event) }
            for event in loading.trackedMeanwhile where !items.contains(event.id) { items.append(event) }
            var running = Running(items: items)
            running.offline = loading.offline
            var steps = Steps<Action>()
            if !loading.countsWaiting.isEmpty { steps.append(.answerCounts(loading.countsWaiting, items.count)) }
            if lastFlushWaiters == nil { running.apply(currentMode, &steps) }
            if !loading.flushesWaiting.isEmpty || lastFlushWaiters != nil {
                running.startFlush(joining: loading.flushesWaiting, &steps)
            }
            state = .running(running)
            endIfFinished(&steps)
            return steps
        case .stopped:
            // Stopped before the load finished: the items stay on disk, known as left at the stop.
            let known = Set(leftAtStop)
            leftAtStop += stored.map(\.id).filter { !known.contains($0) }
            return Steps()
        case .running, .stopping:
            preconditionFailure("Tracking: the stored queue finished loading twice")
        case .modifying:
            preconditionFailure("Tracking: loaded during another transition")
        }
    }

    // MARK: - Running

    /// Switches the mode at once (<doc:Behaviour#E2>): `.manual` also cancels a pending retry; a
    /// periodic mode re-arms its one timer from now. Set while loading, it applies once loaded.
    mutating func setMode(_ newMode: FlushingMode) -> Steps<Action> {
        currentMode = newMode
        var steps = Steps<Action>()
        guard lastFlushWaiters == nil else { return steps }  // the last flush runs whatever the mode
        switch state {
        case .running:
            modifyRunning { $0.apply(newMode, &steps) }
        case .loading, .stopping, .stopped:
            break
        case .modifying:
            preconditionFailure("Tracking: setMode during another transition")
        }
        return steps
    }

    /// The network path changed (<doc:Behaviour#N1>, <doc:Behaviour#N2>). Offline, no upload
    /// starts (an upload already out comes back as usual). When a usable path returns, in every
    /// mode but manual (and for a last flush), a pending backoff is cut short and what is queued
    /// is flushed. Set while loading, it applies once loaded (a return flushes once loaded).
    mutating func networkPathChanged(_ status: NetworkPathStatus) -> Steps<Action> {
        let offline = status == .unusable
        let flushes = currentMode != .manual || lastFlushWaiters != nil
        var steps = Steps<Action>()
        switch state {
        case .loading:
            modifyLoading { loading in
                // Returned while loading: what is queued is flushed once loaded.
                if loading.offline && !offline && flushes { loading.flushesWaiting.append { _ in } }
                loading.offline = offline
            }
        case .running:
            modifyRunning { running in
                let returned = running.offline && !offline
                running.offline = offline
                guard returned, flushes else { return }
                if let retryTimer = running.retryTimer {
                    running.retryTimer = nil
                    steps.cancel(retryTimer)
                }
                if !running.items.isEmpty { running.startFlush(joining: [], &steps) }
            }
        case .stopping, .stopped:
            break  // no upload starts after the stop (A3)
        case .modifying:
            preconditionFailure("Tracking: networkPathChanged during another transition")
        }
        return steps
    }

    /// The app resigned active or went to the background (<doc:Behaviour#E2>): periodic and
    /// automatic flushing upload what is queued (while loading, once loaded) unless an upload
    /// backoff is pending (<doc:Behaviour#E3>: its retry uploads them; entering the background
    /// flushes anyway, see ``appEnteredBackground(_:)``); immediate and manual do nothing here.
    mutating func appLeftForeground() -> Steps<Action> {
        switch currentMode {
        case .periodic, .automatic: break
        case .immediate, .manual: return Steps()
        }
        var steps = Steps<Action>()
        switch state {
        case .loading:
            modifyLoading { $0.flushesWaiting.append { _ in } }
        case .running:
            // In place (no binding of the payload, so its queue is never copied).
            modifyRunning { running in
                if !running.items.isEmpty, running.retryTimer == nil { running.startFlush(joining: [], &steps) }
            }
        case .stopping, .stopped:
            break
        case .modifying:
            preconditionFailure("Tracking: appLeftForeground during another transition")
        }
        return steps
    }

    /// The app went to the background (<doc:Behaviour#E7>): in every mode but manual, whatever is
    /// queued is flushed (a flush in progress is joined; a pending retry does not hold it back:
    /// this may be the last chance before the app is suspended) and `waiter` gets its result.
    /// Returns `false`, with `waiter` not kept, when there is nothing to do: manual mode, nothing
    /// queued and no flush running, or stopped. While the stored queue loads, the flush waits for it.
    mutating func appEnteredBackground(_ waiter: @escaping FlushWaiter) -> (Bool, Steps<Action>) {
        guard currentMode != .manual else { return (false, Steps()) }
        var steps = Steps<Action>()
        switch state {
        case .loading:
            modifyLoading { $0.flushesWaiting.append(waiter) }
        case .running:
            var flushing = false
            modifyRunning { running in
                flushing = !running.items.isEmpty || running.flush != nil
                if flushing { running.startFlush(joining: [waiter], &steps) }
            }
            return (flushing, steps)
        case .stopping, .stopped:
            return (false, steps)
        case .modifying:
            preconditionFailure("Tracking: appEnteredBackground during another transition")
        }
        return (true, steps)
    }

    /// A timer fired: the periodic timer re-arms itself and flushes unless an upload backoff is
    /// pending (<doc:Behaviour#E3>: the server's `Retry-After` holds for every trigger the app did
    /// not ask for); a retry ends the backoff and flushes. A timer the machine no longer waits for
    /// does nothing.
    mutating func timerFired(_ timer: TimerID, at now: Moment) -> Steps<Action> {
        var steps = Steps<Action>()
        switch state {
        case .running:
            let mode = currentMode
            modifyRunning { running in
                if timer == running.periodicTimer, case .periodic(let seconds) = mode {
                    running.schedulePeriodic(every: seconds, &steps)
                    if !running.items.isEmpty, running.retryTimer == nil { running.startFlush(joining: [], &steps) }
                } else if timer == running.retryTimer {
                    running.retryTimer = nil
                    if !running.items.isEmpty { running.startFlush(joining: [], &steps) }
                }
            }
        case .loading, .stopping, .stopped:
            break  // no timer is asked for while loading; a stopped pipeline cancelled its own
        case .modifying:
            preconditionFailure("Tracking: a timer fired during another transition")
        }
        return steps
    }

    /// The backend accepted the item out for upload: it leaves the queue (in memory now, on disk
    /// in order on the storage queue), any pending backoff ends (<doc:Behaviour#E2>), the reload hook
    /// runs (T3), and the flush goes on with the next item or ends. An upload that comes back
    /// after the stop is written the same way (the backend has the item: neither the next start
    /// nor the next pipeline on the store uploads it again, E4), but nothing more is sent: the
    /// pipeline is stopped and settled (``whenSettled(_:)``).
    mutating func uploadSucceeded(_ id: TrackedEvent.ID) -> Steps<Action> {
        var steps = uploadCameBack(id) { running, stopping, steps in
            let flush = running.takeFlush(uploading: id)
            running.remove(id, &steps)
            running.retryAttempt = 0
            if let retryTimer = running.retryTimer {
                running.retryTimer = nil
                steps.cancel(retryTimer)
            }
            steps.append(.itemUploaded)
            running.uploadNext(
                after: flush.cursor, uploaded: flush.uploaded + 1, waiters: flush.waiters, sending: !stopping, &steps)
        }
        endIfFinished(&steps)
        return steps
    }

    /// The item out for upload failed (<doc:Behaviour#E3>). A transient or authorization failure
    /// ends the flush with that failure, keeps every item, and, unless flushing is manual, pauses
    /// the whole queue for a backoff (jitter from `now`). A permanent one counts against the item
    /// (the count is written in order), drops it at the limit with an error log, and the flush goes
    /// on with the next item. After the stop the failure is written the same way, no backoff is
    /// scheduled and nothing more is sent: the pipeline is stopped and settled.
    mutating func uploadFailed(_ id: TrackedEvent.ID, _ failure: SegmentsError, at now: Moment) -> Steps<Action> {
        let mode = currentMode
        let limits = self.limits
        let last = lastFlushWaiters != nil
        var steps = uploadCameBack(id) { running, stopping, steps in
            let flush = running.takeFlush(uploading: id)
            if failure.isTransient || failure.isAuthorizationFailure {
                steps.append(.log(.warning, "Tracking: Upload failed, will retry: \(failure)"))
                // The last flush before a stop, or an upload out at the stop, ends here: no
                // backoff is waited out (A3). Offline, no retry is counted and no backoff grows:
                // the path's return flushes (N1, N2).
                if mode != .manual, !last, !stopping, !running.offline {
                    running.retryAttempt = Self.oneMore(running.retryAttempt)
                    let delay = limits.retry.delay(
                        attempt: running.retryAttempt, random: now.random, retryAfter: failure.retryAfter)
                    if let retryTimer = running.retryTimer { steps.cancel(retryTimer) }
                    let timer = running.makeTimer()
                    running.retryTimer = timer
                    steps.schedule(timer, after: delay)
                }
                if !flush.waiters.isEmpty { steps.append(.completeFlushes(flush.waiters, .failure(failure))) }
                return
            }
            guard var failed = running.items.item(id) else {
                preconditionFailure("Tracking: the item out for upload left the queue meanwhile")
            }
            // A store other than the SDK's may hand back any count, so it saturates (Behaviour P7).
            failed.failedAttempts = Self.oneMore(failed.failedAttempts)
            if failed.failedAttempts >= limits.maxPermanentFailures {
                running.remove(id, &steps)
                steps.append(.log(.error, "Tracking: Dropped an item after \(failed.failedAttempts) failed uploads: \(failure)"))
            } else {
                running.items.update(failed)
                steps.append(.update(failed))
                steps.append(.log(
                    .warning,
                    "Tracking: Upload failed (\(failed.failedAttempts) of \(limits.maxPermanentFailures) tries): \(failure)"))
            }
            guard !last else {
                // The last flush before a stop ends at the first failure (A3).
                if !flush.waiters.isEmpty { steps.append(.completeFlushes(flush.waiters, .failure(failure))) }
                return
            }
            running.uploadNext(after: flush.cursor, uploaded: flush.uploaded, waiters: flush.waiters, sending: !stopping, &steps)
        }
        endIfFinished(&steps)
        return steps
    }

    /// `count + 1`, saturating at `Int.max`; a negative count counts from 0 (<doc:Behaviour#P7>: a count
    /// read from a store is never trusted to leave room for one more).
    static func oneMore(_ count: Int) -> Int {
        let (next, overflow) = max(count, 0).addingReportingOverflow(1)
        return overflow ? Int.max : next
    }

    // MARK: - Stopped

    /// Stops: timers end, waiting counts get 0, items stay on disk for the next start (the
    /// in-memory queue is released after the lock), and no upload starts from now on
    /// (<doc:Behaviour#A3>). An upload already sent comes back as usual: the item it delivered
    /// is removed from the store, one it failed is counted (<doc:Behaviour#E4>); until then the
    /// pipeline is not settled (``whenSettled(_:)``), and the next pipeline on the same store
    /// waits for that before it loads. The waiters of the flush in progress, or of flushes asked
    /// for while the stored queue loads, are returned for the caller to hand to `successor`, the
    /// next pipeline on the same store, when there is one (its flush runs over the same items);
    /// otherwise they fail with `.stopped` (<doc:Behaviour#E5>). Flushes asked of this one later
    /// go to `successor` too (``flush(_:)``). A last flush asked for by ``finish(_:)`` ends with
    /// the stop, whoever stopped it: its waiters are told once the pipeline is settled.
    mutating func stop(to successor: TrackingPipeline? = nil) -> ([FlushWaiter], Steps<Action>) {
        if let waiters = lastFlushWaiters {
            lastFlushWaiters = []
            finishedWaiters += waiters
        }
        var steps = Steps<Action>()
        var handed: [FlushWaiter] = []
        switch state {
        case .loading(let loading):
            leftAtStop = loading.trackedMeanwhile.map(\.id)
            state = .stopped
            settle(&steps)
            handed = handOver(loading.flushesWaiting, to: successor, &steps)
            if !loading.countsWaiting.isEmpty { steps.append(.answerCounts(loading.countsWaiting, 0)) }
        case .running(var running):
            leftAtStop = running.items.ordered.map(\.id)
            if let periodicTimer = running.periodicTimer { steps.cancel(periodicTimer) }
            // (A retry timer cancelled stays recorded: items whose append ends after the stop are
            // not uploaded while the backoff would have held them: E3.)
            if let retryTimer = running.retryTimer { steps.cancel(retryTimer) }
            running.periodicTimer = nil
            // An item admitted before the stop whose write has not come back is this pipeline's too.
            guard running.flush != nil || appendsInProgress > 0 else {
                state = .stopped
                steps.release(running.items)
                settle(&steps)
                break
            }
            // The flush itself is handed over, even when no one waits for it (as one asked for
            // while loading is): the next pipeline runs it over the same items.
            handed = handOver(running.flush.map { $0.waiters.isEmpty ? [{ _ in }] : $0.waiters } ?? [], to: successor, &steps)
            running.flush?.waiters = []
            state = .stopping(running)
        case .stopping, .stopped:
            break
        case .modifying:
            preconditionFailure("Tracking: stop during another transition")
        }
        return (handed, steps)
    }

    /// The waiters of the flush running or asked for at a stop: handed back for `successor` (which
    /// takes later flushes too), or failed with `.stopped` when there is none.
    private mutating func handOver(
        _ waiters: [FlushWaiter], to successor: TrackingPipeline?, _ steps: inout Steps<Action>
    ) -> [FlushWaiter] {
        if let successor {
            flushesGoTo = successor
            return waiters
        }
        if !waiters.isEmpty { steps.append(.completeFlushes(waiters, .failure(SegmentsError.stopped))) }
        return []
    }

    /// Whether the upload of `id`, which a flush decided, is to be sent now that its turn on the
    /// scheduler came: it is while the flush that decided it runs. Once stopped it is not
    /// (<doc:Behaviour#A3>: no upload starts after the stop): the flush ends there, and the
    /// pipeline is settled unless an item's write is still to come back.
    mutating func beforeUpload(_ id: TrackedEvent.ID) -> (Bool, Steps<Action>) {
        switch state {
        case .running(let running):
            return (running.flush?.uploading == id, Steps())
        case .stopping(var running):
            guard running.flush?.uploading == id else { return (false, Steps()) }
            state = .modifying
            running.flush = nil
            state = .stopping(running)
            var steps = Steps<Action>()
            finishIfFlushEnded(&steps)
            return (false, steps)
        case .loading, .stopped:
            return (false, Steps())
        case .modifying:
            preconditionFailure("Tracking: beforeUpload during another transition")
        }
    }

    /// Runs `waiter` once the pipeline is settled: stopped, the flush it had begun ended, and the
    /// removal of every item that flush delivered queued on the storage queue (so work `waiter`
    /// queues there runs after it). The next pipeline on the same store loads only then, so it
    /// never loads an item this one is still uploading (<doc:Behaviour#E4>, <doc:Behaviour#A4>).
    /// At once when already settled.
    mutating func whenSettled(_ waiter: @escaping SettleWaiter) -> Steps<Action> {
        var steps = Steps<Action>()
        settleWaiters.append(waiter)
        if case .stopped = state { settle(&steps) }
        return steps
    }

    // MARK: - The last flush (→ stopped)

    /// One last flush, then stop (<doc:Behaviour#A3>): the mode's timers and any backoff end, what
    /// is queued is uploaded oldest first, and the flush ends when the queue is empty or an upload
    /// fails — no backoff is waited out; then the pipeline stops as ``stop()`` does and `waiter` is
    /// called. While the stored queue loads, the flush starts once it is loaded; a flush in
    /// progress is the last one. Once stopped, `waiter` is called at once.
    mutating func finish(_ waiter: @escaping FinishWaiter) -> Steps<Action> {
        var steps = Steps<Action>()
        switch state {
        case .stopped:
            steps.append(.finished([waiter]))
            return steps
        case .stopping:
            finishedWaiters.append(waiter)  // told once its flush has ended (settled)
        case .loading:
            lastFlushWaiters = (lastFlushWaiters ?? []) + [waiter]
        case .running:
            let first = lastFlushWaiters == nil
            lastFlushWaiters = (lastFlushWaiters ?? []) + [waiter]
            guard first else { return steps }
            modifyRunning { running in
                if let periodicTimer = running.periodicTimer {
                    running.periodicTimer = nil
                    steps.cancel(periodicTimer)
                }
                if let retryTimer = running.retryTimer {
                    running.retryTimer = nil
                    steps.cancel(retryTimer)
                }
                running.startFlush(joining: [], &steps)
            }
            endIfFinished(&steps)
        case .modifying:
            preconditionFailure("Tracking: finish during another transition")
        }
        return steps
    }

    /// Stops when the last flush asked for by ``finish(_:)`` has ended.
    private mutating func endIfFinished(_ steps: inout Steps<Action>) {
        guard lastFlushWaiters != nil, case .running(let running) = state, running.flush == nil else { return }
        for step in stop().1 { steps.append(step: step) }
    }

    /// The removal of `id` has been written to the store (or failed, logged): a read of the store
    /// from now on does not find it.
    mutating func removalWritten(_ id: TrackedEvent.ID) -> Steps<Action> {
        switch state {
        case .running:
            modifyRunning { _ = $0.removalsUnwritten.remove(id) }
        case .stopping(var running):
            state = .modifying
            running.removalsUnwritten.remove(id)
            state = .stopping(running)
        case .loading, .stopped, .modifying:
            break
        }
        return Steps()
    }

    /// Hands the settle waiters, and those of a last flush that ended with the stop, to the
    /// steps (stopped, nothing out).
    private mutating func settle(_ steps: inout Steps<Action>) {
        if !settleWaiters.isEmpty {
            steps.append(.settled(settleWaiters))
            settleWaiters = []
        }
        if !finishedWaiters.isEmpty {
            steps.append(.finished(finishedWaiters))
            finishedWaiters = []
        }
    }

    /// A stopped pipeline's flush has ended, and no item admitted before the stop is still being
    /// written: it is stopped now, and settled.
    private mutating func finishIfFlushEnded(_ steps: inout Steps<Action>) {
        guard case .stopping(let running) = state, running.flush == nil, appendsInProgress == 0 else { return }
        state = .stopped
        steps.release(running.items)
        settle(&steps)
    }

    // MARK: - Changing a payload in place

    /// Runs `body` on the loading payload in place: the state is `.modifying` meanwhile, so the
    /// payload's arrays are uniquely referenced and grow without a copy.
    private mutating func modifyLoading(_ body: (inout Loading) -> Void) {
        guard case .loading(var loading) = state else { preconditionFailure("Tracking: not loading") }
        state = .modifying
        body(&loading)
        state = .loading(loading)
    }

    /// Runs `body` on the running payload in place (see ``modifyLoading(_:)``): the queue of up to
    /// 100,000 items is never copied. `body` must not touch the machine (pass it what it needs).
    /// The upload out came back: `body` decides on the running queue — or, stopped, on the queue
    /// of the flush that finishes (once it has ended the pipeline is stopped and settled). While
    /// loading no upload can be out.
    private mutating func uploadCameBack(
        _ id: TrackedEvent.ID, _ body: (inout Running, _ stopping: Bool, inout Steps<Action>) -> Void
    ) -> Steps<Action> {
        var steps = Steps<Action>()
        switch state {
        case .running:
            modifyRunning { body(&$0, false, &steps) }
        case .stopping(var running):
            // Stopping: the upload's outcome is written, but no further upload is decided (A3).
            state = .modifying
            body(&running, true, &steps)
            state = .stopping(running)
            finishIfFlushEnded(&steps)
        case .stopped:
            break
        case .loading:
            preconditionFailure("Tracking: an upload came back while the stored queue was still loading")
        case .modifying:
            preconditionFailure("Tracking: an upload came back during another transition")
        }
        return steps
    }

    private mutating func modifyRunning(_ body: (inout Running) -> Void) {
        guard case .running(var running) = state else { preconditionFailure("Tracking: not running") }
        state = .modifying
        body(&running)
        state = .running(running)
    }
}

// MARK: - Description

extension TrackingStateMachine: CustomStringConvertible {
    /// The state in words, for tests and debugging: `loading(tracked: [a], flushes: 1, counts: 0)`,
    /// `running(items: [a, b×2], flush: a uploaded 0 waiters 1, retry: attempt 1 timer 3, periodic: timer 2)`,
    /// `stopping(items: [a], flush: a uploaded 0 waiters 0)`, `stopped`.
    var description: String {
        switch state {
        case .loading(let loading):
            return "loading(tracked: \(Self.names(loading.trackedMeanwhile)), flushes: \(loading.flushesWaiting.count), counts: \(loading.countsWaiting.count))"
        case .stopping(let running):
            return "stopping(\(Self.queueAndFlush(of: running).joined(separator: ", ")))"
        case .running(let running):
            var parts = Self.queueAndFlush(of: running)
            if let timer = running.retryTimer {
                parts.append("retry: attempt \(running.retryAttempt) timer \(timer.rawValue)")
            } else if running.retryAttempt > 0 {
                parts.append("retry: attempt \(running.retryAttempt)")
            }
            if let timer = running.periodicTimer { parts.append("periodic: timer \(timer.rawValue)") }
            if running.offline { parts.append("offline") }
            return "running(\(parts.joined(separator: ", ")))"
        case .stopped:
            return "stopped"
        case .modifying:
            return "modifying"
        }
    }

    /// The items and the flush of a running or stopping payload, in words.
    private static func queueAndFlush(of running: Running) -> [String] {
        var parts = ["items: \(names(running.items.ordered))"]
        if let flush = running.flush {
            let item = running.items.item(flush.uploading).map(name) ?? "?"
            parts.append("flush: \(item) uploaded \(flush.uploaded) waiters \(flush.waiters.count)")
        }
        return parts
    }

    /// An item in words: its event type (`customer` for a customer update), `×n` after n
    /// permanent failures.
    static func name(_ event: TrackedEvent) -> String {
        let kind = if case .event(let type) = event.kind { type } else { "customer" }
        return event.failedAttempts == 0 ? kind : "\(kind)×\(event.failedAttempts)"
    }

    static func names(_ events: [TrackedEvent]) -> String {
        "[" + events.map(name).joined(separator: ", ") + "]"
    }
}

extension SegmentsError {
    /// Whether the backend refused the credentials (401, 403): the whole queue waits
    /// (<doc:Behaviour#E3>).
    var isAuthorizationFailure: Bool {
        code == .unauthorized || httpStatus == 401 || httpStatus == 403
    }
}
