import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Requests a reload because a tracked event or customer update was uploaded (SPEC T3).
    public func reloadAfterUpload() {
        mutate { state, effects in
            guard state.backend != nil else { return }
            guard !state.listeners.isEmpty else {
                effects.log(.verbose, SegmentsLogText.trackedSkippedNoCallback)
                return
            }
            requestReload(&state, &effects)
        }
    }

    /// Coalesces a reload request (SPEC T5, T6): during a flight it owes one follow-up; while a
    /// retry waits it is absorbed (the retry reloads); while the debounce waits it only moves the
    /// burst's last request (the timer re-arms itself when it fires early, so a burst of requests
    /// costs one timer, not one per request); otherwise it starts the debounce.
    func requestReload(_ state: inout EngineState, _ effects: inout EngineEffects) {
        guard state.backend != nil else { return }
        if state.flight != nil {
            state.reloads.dirty = true
            return
        }
        if state.reloads.retry != nil { return }
        let now = self.now
        state.reloads.lastRequest = now
        if state.reloads.debounce != nil { return }
        state.reloads.burstStart = now
        armDebounce(after: dependencies.timings.debounce.delay, &state)
    }

    private func armDebounce(after delay: TimeInterval, _ state: inout EngineState) {
        state.reloads.debounceGeneration += 1
        let generation = state.reloads.debounceGeneration
        state.reloads.debounce = dependencies.scheduler.schedule(after: delay) { [weak self] in
            self?.automaticReloadDue(.debounce, generation: generation)
        }
    }

    enum ReloadTimer { case debounce, retry }

    /// The debounce or a retry fired: start an automatic reload if it is still wanted (SPEC T7).
    func automaticReloadDue(_ timer: ReloadTimer, generation: Int) {
        mutate { state, effects in
            switch timer {
            case .debounce:
                guard state.reloads.debounceGeneration == generation, state.reloads.debounce != nil else { return }
                let burstStart = state.reloads.burstStart ?? now
                let due = dependencies.timings.debounce.fireDate(
                    firstRequest: burstStart, lastRequest: state.reloads.lastRequest ?? burstStart)
                let remaining = due.timeIntervalSince(now)
                if remaining > 0 {
                    armDebounce(after: remaining, &state)  // requests came meanwhile: wait for the rest
                    return
                }
                state.reloads.debounce = nil
                state.reloads.burstStart = nil
                state.reloads.lastRequest = nil
            case .retry:
                guard state.reloads.retryGeneration == generation, state.reloads.retry != nil else { return }
                state.reloads.retry = nil
            }
            guard state.backend != nil else { return }
            state.listeners.pruneReleasedOwners()
            guard !state.listeners.isEmpty else {
                effects.log(.verbose, SegmentsLogText.reloadSkippedNoCallback)
                return
            }
            if state.flight != nil {
                state.reloads.dirty = true
            } else {
                startFlight(automatic: true, &state, &effects)
            }
        }
    }

    /// Snapshots the customer and starts a fetch for it (SPEC C1), linking first when needed (C4).
    func startFlight(automatic: Bool, _ state: inout EngineState, _ effects: inout EngineEffects) {
        guard let backend = state.backend, let customer = state.customer else { return }
        guard customer.cookie != nil else {
            let error = SegmentsError(.missingCookie, "the customer has no cookie")
            effects.log(.warning, SegmentsLogText.fetchFailed(error))
            answerReads(&state, with: .failure(error))
            return
        }
        state.nextFlightId += 1
        let flight = EngineState.Flight(
            id: state.nextFlightId, customer: customer,
            needsLink: customer.hasHardIds && !state.baseline.linkedCustomers.contains(customer),
            repository: backend.repository, automatic: automatic)
        state.flight = flight
        dependencies.scheduler.schedule(after: 0) { [weak self] in await self?.run(flight) }
    }

    /// Link (when needed), then fetch, checking before each request that the flight still counts.
    private func run(_ flight: EngineState.Flight) async {
        guard mayProceed(flight) else { return }
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
            let segments = try await flight.repository.fetchSegments(for: flight.customer)
            finish(flight, with: .success(segments))
        } catch {
            finish(flight, with: .failure(SegmentsError.wrapping(error)))
        }
    }

    /// Whether the flight is still current and its customer unchanged (SPEC C2). Remembers a
    /// successful link (SPEC C4) first.
    private func mayProceed(_ flight: EngineState.Flight, linked: Bool = false) -> Bool {
        mutate { state, effects in
            guard state.flight?.id == flight.id, let backend = state.backend else { return false }
            if linked {
                state.baseline.linkedCustomers.insert(flight.customer)
                save(state.baseline, to: backend, &effects)
            }
            guard state.customer == flight.customer else {
                effects.log(.verbose, SegmentsLogText.cancelledCustomerChanged)
                state.flight = nil
                customerChanged(during: flight, &state, &effects)
                return false
            }
            return true
        }
    }

    /// Applies a flight's outcome, unless it was discarded or its customer is gone (SPEC C3).
    private func finish(_ flight: EngineState.Flight, with result: Result<SegmentsByCategory, SegmentsError>) {
        mutate { state, effects in
            guard state.flight?.id == flight.id else { return }
            state.flight = nil
            guard state.customer == flight.customer else {
                effects.log(.verbose, SegmentsLogText.ignoredDifferentCustomer)
                customerChanged(during: flight, &state, &effects)
                return
            }
            switch result {
            case .success(let segments): apply(segments, of: flight, &state, &effects)
            case .failure(let error): fail(error, of: flight, &state, &effects)
            }
        }
    }

    /// SPEC D1–D6, G3: replace the baseline, tell listeners, answer reads, run the owed follow-up.
    private func apply(
        _ segments: SegmentsByCategory, of flight: EngineState.Flight, _ state: inout EngineState,
        _ effects: inout EngineEffects
    ) {
        let changes = SegmentDiff.changes(from: state.baseline.snapshot, to: segments, for: flight.customer)
        state.baseline.snapshot = SegmentSnapshot(customer: flight.customer, segments: segments, fetchedAt: now)
        if let backend = state.backend { save(state.baseline, to: backend, &effects) }
        let categories = changes.keys.map(\.name).sorted().joined(separator: ", ")
        effects.log(.verbose, "Segments: Segments fetched; changed categories: [\(categories)]")
        deliver(changes, firstLoad: segments, &state)
        answerReads(&state, with: .success(segments))
        state.reloads.retryAttempt = 0
        if state.reloads.dirty {
            state.reloads.dirty = false
            requestReload(&state, &effects)
        }
    }

    /// SPEC D9, T7, C4, L2: nothing changes; reads fail; transient failures of automatic reloads
    /// are retried with backoff while listeners exist.
    private func fail(
        _ error: SegmentsError, of flight: EngineState.Flight, _ state: inout EngineState,
        _ effects: inout EngineEffects
    ) {
        if error.code == .linkFailed {
            let verbose = dependencies.logger.isEnabled(.verbose)
            effects.log(.warning, SegmentsLogText.linkFailed(flight.customer, verbose: verbose))
        }
        effects.log(.warning, SegmentsLogText.fetchFailed(error))
        answerReads(&state, with: .failure(error))
        let owed = flight.automatic || state.reloads.dirty
        state.reloads.dirty = false
        guard owed, error.isTransient, !state.listeners.isEmpty else { return }
        state.reloads.retryAttempt += 1
        let delay = dependencies.timings.retry.delay(
            attempt: state.reloads.retryAttempt, random: dependencies.random(), retryAfter: error.retryAfter)
        state.reloads.retryGeneration += 1
        let generation = state.reloads.retryGeneration
        state.reloads.retry = dependencies.scheduler.schedule(after: delay) { [weak self] in
            self?.automaticReloadDue(.retry, generation: generation)
        }
    }

    /// The customer changed under a flight (SPEC C2, C3, G6): reads retry for the current customer
    /// (a bounded number of times), and an owed automatic reload is requested again.
    private func customerChanged(
        during flight: EngineState.Flight, _ state: inout EngineState, _ effects: inout EngineEffects
    ) {
        let owed = flight.automatic || state.reloads.dirty
        state.reloads.dirty = false
        var retrying: [EngineState.PendingRead] = []
        for var read in state.reads {
            if read.customerRetries < dependencies.timings.maxReadRetries {
                read.customerRetries += 1
                retrying.append(read)
            } else {
                answer(read, with: .failure(SegmentsError(.customerChanged, "the customer changed during the read")))
            }
        }
        state.reads = retrying
        if !retrying.isEmpty {
            startFlight(automatic: owed, &state, &effects)
        } else if owed && !state.listeners.isEmpty {
            requestReload(&state, &effects)
        }
    }
}
