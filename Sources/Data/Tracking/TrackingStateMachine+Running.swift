import Foundation
import SegmentsDomain

// The tracking machine's running payload, and the steps it takes on its own (its part of
// TrackingStateMachine's transitions while the queue is in memory).

extension TrackingStateMachine {
    /// Running: the queue in memory, the flush in progress, the timers.
    struct Running: Sendable {
        var items: PendingItems
        /// The flush in progress, if any: only one runs at a time (<doc:Behaviour#E5>).
        var flush: Flush?
        /// The periodic mode's timer.
        var periodicTimer: TimerID?
        /// The backoff after a transient or authorization failure (<doc:Behaviour#E3>): every
        /// trigger the app did not ask for waits for it — an enqueue in immediate mode, the periodic
        /// timer, resigning active — while the app's flush (E5) and the flush on entering the
        /// background (E7) go ahead; a success or switching to `.manual` ends it (E2).
        var retryTimer: TimerID?
        /// Failures in a row that paused the queue; a success resets it.
        var retryAttempt = 0
        /// Items removed from the queue in memory whose removal is not written to the store yet
        /// (it is queued on the storage queue): a read of the store meanwhile still finds them,
        /// and they are not queued again from it (<doc:Behaviour#E4>, <doc:Behaviour#P8>).
        var removalsUnwritten: Set<TrackedEvent.ID> = []
        /// The last timer id handed out (timers exist only while running).
        var lastTimer = 0
        /// No usable network path (<doc:Behaviour#N1>): no upload starts, a flush ends at once
        /// with `SegmentsError.offline`, and a transient failure grows no backoff.
        var offline = false

        init(items: PendingItems) {
            self.items = items
        }
    }

    /// One flush in progress: the item out for upload and what the flush has done so far.
    struct Flush: Sendable {
        /// The one item being uploaded.
        var uploading: TrackedEvent.ID
        /// The position after it in ``PendingItems``: every item before was tried in this flush.
        var cursor: Int
        /// How many items went up in this flush.
        var uploaded: Int
        /// Everyone waiting for this flush's result.
        var waiters: [FlushWaiter]
    }
}

// MARK: - The running payload's own steps

extension TrackingStateMachine.Running {
    typealias Action = TrackingStateMachine.Action

    /// Makes the mode's timers right (<doc:Behaviour#E2>): the periodic timer is re-armed from now,
    /// `.manual` cancels a pending retry, `.immediate` uploads what waits unless a retry does.
    mutating func apply(_ mode: FlushingMode, _ steps: inout Steps<Action>) {
        if let periodicTimer {
            steps.cancel(periodicTimer)
            self.periodicTimer = nil
        }
        switch mode {
        case .immediate:
            if !items.isEmpty, retryTimer == nil { startFlush(joining: [], &steps) }
        case .periodic(let seconds):
            schedulePeriodic(every: seconds, &steps)
        case .automatic:
            break  // uploads wait for the app to leave the foreground (appLeftForeground)
        case .manual:
            if let retryTimer {
                steps.cancel(retryTimer)
                self.retryTimer = nil
            }
        }
    }

    mutating func schedulePeriodic(every seconds: TimeInterval, _ steps: inout Steps<Action>) {
        let timer = makeTimer()
        periodicTimer = timer
        // NaN would pass `max` unchanged and a live scheduler runs it at once: a tight loop. The
        // facade refuses such an interval (Behaviour E2); this keeps the machine safe regardless.
        steps.schedule(timer, after: seconds.isNaN ? 1 : max(seconds, 1))
    }

    mutating func makeTimer() -> TimerID {
        lastTimer += 1
        return TimerID(rawValue: lastTimer)
    }

    /// Starts a flush from the oldest item, or adds `waiters` to the one in progress (E5).
    mutating func startFlush(joining waiters: [TrackingStateMachine.FlushWaiter], _ steps: inout Steps<Action>) {
        if flush != nil {
            flush?.waiters.append(contentsOf: waiters)
            return
        }
        uploadNext(after: 0, uploaded: 0, waiters: waiters, &steps)
    }

    /// Sends the first item at or after `cursor`; with none left, or not `sending` (the pipeline
    /// stops: <doc:Behaviour#A3>), the flush ends in the same step (so an item queued meanwhile is
    /// never stranded) and its waiters get the count.
    mutating func uploadNext(
        after cursor: Int, uploaded: Int, waiters: [TrackingStateMachine.FlushWaiter], sending: Bool = true,
        _ steps: inout Steps<Action>
    ) {
        guard !offline else {
            // No upload starts without a usable path (N1): the flush ends here.
            flush = nil
            if !waiters.isEmpty { steps.append(.completeFlushes(waiters, .failure(SegmentsError.offline))) }
            return
        }
        if sending, let (event, next) = items.first(atOrAfter: cursor) {
            flush = TrackingStateMachine.Flush(uploading: event.id, cursor: next, uploaded: uploaded, waiters: waiters)
            steps.append(.upload(event))
        } else {
            flush = nil
            if !waiters.isEmpty { steps.append(.completeFlushes(waiters, .success(uploaded))) }
        }
    }

    /// Removes `id` from the queue in memory and queues its removal from the store; until that is
    /// written, a read of the store still finds it (``removalsUnwritten``).
    mutating func remove(_ id: TrackedEvent.ID, _ steps: inout Steps<Action>) {
        items.remove(id)
        removalsUnwritten.insert(id)
        steps.append(.remove(id))
    }

    /// Ends the flush whose item `id` came back, returning it; a result no flush waits for is a bug.
    mutating func takeFlush(uploading id: TrackedEvent.ID) -> TrackingStateMachine.Flush {
        guard let flush, flush.uploading == id else {
            preconditionFailure("Tracking: an upload came back that no flush sent")
        }
        self.flush = nil
        return flush
    }
}
