import Foundation
import SegmentsDomain

/// Carrying out what the state machine decided, outside the engine's lock.
extension SegmentationEngine {
    typealias Action = SegmentationStateMachine.Action

    func perform(_ action: Action) {
        switch action {
        case .log(let level, let message):
            dependencies.runtime.logger.log(level, message)
        case .logLinkFailure(let customer):
            let verbose = dependencies.runtime.logger.isEnabled(.verbose)
            dependencies.runtime.logger.log(.warning, SegmentsLogText.linkFailed(customer, verbose: verbose))
        case .scheduleTimer(let timer, let delay):
            schedule(timer, after: delay)
        case .cancelTimer(let timer):
            core.withLock { $0.timers.removeValue(forKey: timer) }?.cancel()
        case .startFlight(let flight):
            dependencies.runtime.scheduler.schedule(after: 0) { [weak self] in await self?.run(flight) }
        case .deliver(let deliveries):
            // One hop for the whole fan-out; each call still checks its gate when it runs (D7).
            dependencies.runtime.deliveryQueue.async {
                for delivery in deliveries { delivery.run() }
            }
        case .answer(let reads, let result):
            answer(reads, with: result)
        case .saveCustomer(let customer, let store):
            core.withLock { $0.pendingCustomerSaves += 1 }
            save("the customer") { [weak self] in
                defer { self?.core.withLock { $0.pendingCustomerSaves -= 1 } }
                try store.save(customer)
            }
        case .saveBaseline(let baseline, let store):
            save("the segments baseline") { try store.save(baseline) }
        case .loadBaseline(let load, let store):
            dependencies.storageQueue.async { [weak self] in
                let baseline = store.load()
                guard let self else { return }
                let now = moment
                transition { $0.baselineLoaded(load, baseline, at: now) }
            }
        }
    }

    /// Schedules a reload timer and keeps its token while the machine still waits for it, so a
    /// later cancel can withdraw it; a timer that already fired is not kept.
    private func schedule(_ timer: SegmentationStateMachine.TimerID, after delay: TimeInterval) {
        let work = dependencies.runtime.scheduler.schedule(after: delay) { [weak self] in
            guard let self else { return }
            core.withLock { _ = $0.timers.removeValue(forKey: timer) }
            let now = moment
            transition { $0.timerFired(timer, at: now) }
        }
        core.withLock { core in
            if core.machine.currentTimer == timer { core.timers[timer] = work }
        }
    }

    /// Answers reads: completion handlers in one hop on the delivery queue, awaiting tasks
    /// directly (see Behaviour G4).
    private func answer(
        _ reads: [SegmentationStateMachine.PendingRead], with result: Result<SegmentsByCategory, SegmentsError>
    ) {
        var onQueue: [@Sendable () -> Void] = []
        for read in reads {
            let narrowed = result.map { $0[read.category] ?? [] }
            switch read.reply {
            case .direct(let resume): resume(narrowed)
            case .onDeliveryQueue(let completion): onQueue.append { completion(narrowed) }
            }
        }
        guard !onQueue.isEmpty else { return }
        let calls = onQueue
        dependencies.runtime.deliveryQueue.async { calls.forEach { $0() } }
    }

    /// Saves on a storage queue, in the order decided; a failure is logged.
    private func save(_ what: String, _ write: @escaping @Sendable () throws -> Void) {
        let logger = dependencies.runtime.logger
        dependencies.storageQueue.async {
            do { try write() } catch {
                logger.log(.error, "Segments: Saving \(what) failed: \(error)")
            }
        }
    }

    /// Link (when needed), then fetch, asking the machine before each request whether the flight
    /// still counts (see Behaviour C1, C2, C4).
    private func run(_ flight: SegmentationStateMachine.Flight) async {
        guard mayProceed(flight, linked: false) else { return }
        if flight.needsLink {
            do {
                try await flight.repository.linkCustomerIds(flight.customer)
            } catch {
                let cause = SegmentsError.wrapping(error)
                let failure = SegmentsError(
                    .linkFailed, "linking the customer ids failed: \(cause)", httpStatus: cause.httpStatus,
                    retryAfter: cause.retryAfter, underlying: cause)
                finish(flight, with: .failure(failure))
                return
            }
            guard mayProceed(flight, linked: true) else { return }
        }
        do {
            finish(flight, with: .success(try await flight.repository.fetchSegments(for: flight.customer)))
        } catch {
            finish(flight, with: .failure(SegmentsError.wrapping(error)))
        }
    }

    private func mayProceed(_ flight: SegmentationStateMachine.Flight, linked: Bool) -> Bool {
        let now = moment
        return transition { $0.flightMayProceed(flight.id, linked: linked, at: now) }
    }

    private func finish(_ flight: SegmentationStateMachine.Flight, with result: Result<SegmentsByCategory, SegmentsError>) {
        let now = moment
        transition { $0.flightFinished(flight.id, with: result, at: now) }
    }
}
