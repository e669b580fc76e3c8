import Foundation
import SegmentsDomain

extension TrackingPipeline {
    /// Uploads queued items oldest first, one request each, until none is left (SPEC E3).
    ///
    /// A transient failure ends the flush and schedules a retry with backoff; a permanent one
    /// counts against the item, which is dropped after the limit, and the flush goes on.
    func runUploadLoop() async {
        var attempted: Set<TrackedEvent.ID> = []
        while let event = nextItemOrFinish(excluding: attempted) {
            attempted.insert(event.id)
            do {
                try await uploader.upload(event)
                markUploaded(event)
                onUploaded()
            } catch {
                let failure = SegmentsError.wrapping(error)
                if failure.isTransient {
                    endFlush(with: .failure(failure), retryAfter: failure)
                    return
                }
                recordPermanentFailure(of: event, failure)
            }
        }
    }

    /// The oldest item not yet tried in this flush; when there is none, the flush ends in the same
    /// lock section, so an item queued meanwhile is never stranded.
    private func nextItemOrFinish(excluding attempted: Set<TrackedEvent.ID>) -> TrackedEvent? {
        let (next, waiters, count) = state.withLock { state -> (TrackedEvent?, [@Sendable (FlushResult) -> Void], Int) in
            if !state.stopped, let next = state.queue.first(where: { !attempted.contains($0.id) }) {
                return (next, [], 0)
            }
            state.flushing = false
            state.retryAttempt = 0
            defer { state.waiters = [] }
            return (nil, state.waiters, state.uploaded)
        }
        waiters.forEach { $0(.success(count)) }
        return next
    }

    private func markUploaded(_ event: TrackedEvent) {
        state.withLock { state in
            state.queue.removeAll { $0.id == event.id }
            state.uploaded += 1
        }
        do { try store.remove(id: event.id) } catch {
            // At-least-once: the item may be uploaded again after a restart, never lost (E4).
            dependencies.logger.log(.error, "Tracking: Removing an uploaded event from the queue failed: \(error)")
        }
    }

    private func recordPermanentFailure(of event: TrackedEvent, _ failure: SegmentsError) {
        var failed = event
        failed.failedAttempts += 1
        let drop = failed.failedAttempts >= dependencies.maxPermanentFailures
        state.withLock { state in
            if drop {
                state.queue.removeAll { $0.id == event.id }
            } else if let index = state.queue.firstIndex(where: { $0.id == event.id }) {
                state.queue[index] = failed
            }
        }
        do {
            if drop { try store.remove(id: event.id) } else { try store.update(failed) }
        } catch {
            dependencies.logger.log(.error, "Tracking: Updating the event queue failed: \(error)")
        }
        if drop {
            dependencies.logger.log(
                .error, "Tracking: Dropped an item after \(failed.failedAttempts) failed uploads: \(failure)")
        } else {
            dependencies.logger.log(.warning, "Tracking: Upload failed (\(failed.failedAttempts) of \(dependencies.maxPermanentFailures) tries): \(failure)")
        }
    }

    /// Ends a flush after a transient failure and, unless flushing is manual, retries later.
    private func endFlush(with result: FlushResult, retryAfter failure: SegmentsError) {
        dependencies.logger.log(.warning, "Tracking: Upload failed, will retry: \(failure)")
        let waiters = state.withLock { state -> [@Sendable (FlushResult) -> Void] in
            state.flushing = false
            defer { state.waiters = [] }
            guard !state.stopped, state.mode != .manual else { return state.waiters }
            state.retryAttempt += 1
            let delay = dependencies.retry.delay(
                attempt: state.retryAttempt, random: dependencies.random(), retryAfter: failure.retryAfter)
            state.retry?.cancel()
            state.retry = dependencies.scheduler.schedule(after: delay) { [weak self] in
                guard let self else { return }
                let start = self.state.withLock { state -> Bool in
                    state.retry = nil
                    return !state.stopped && !state.queue.isEmpty && self.beginFlush(&state)
                }
                if start { await self.runUploadLoop() }
            }
            return state.waiters
        }
        waiters.forEach { $0(result) }
    }
}
