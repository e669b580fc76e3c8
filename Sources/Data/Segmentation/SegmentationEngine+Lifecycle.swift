import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Whether ``configure(_:)`` ran and ``stop()`` did not follow.
    public var isConfigured: Bool {
        state.withLock { $0.backend != nil }
    }

    /// The current customer, or `nil` before configuration.
    public var customer: CustomerIds? {
        state.withLock { $0.customer }
    }

    /// Configures the engine with an integration's backend (SPEC T2).
    ///
    /// Loads the customer (creating a cookie when there is none) and the baseline, then requests the
    /// initial reload when a listener wants its first load, and serves reads made before.
    /// Configuring a running engine first cancels its work, as ``stop()`` does, but keeps listeners.
    public func configure(_ backend: Backend) {
        mutate { state, effects in
            cancelWork(&state, &effects)
            state.phase = .running(backend)
            var customer = backend.customerStore.load() ?? CustomerIds([:])
            if customer.cookie == nil {
                customer = CustomerIds(customer.values.merging([CustomerIds.cookieKey: dependencies.makeCookie()]) { $1 })
                save(customer, to: backend, &effects)
            }
            state.customer = customer
            state.baseline = backend.baselineStore.load()

            if state.listeners.isEmpty {
                effects.log(.verbose, SegmentsLogText.initialSkippedNoCallback)
            } else if !state.listeners.anyWantsFirstLoad {
                effects.log(.verbose, SegmentsLogText.initialSkippedNotRequired)
            } else {
                requestReload(&state, &effects)
            }
            warnIfTrackingNotImmediate(&state, &effects)

            let waiting = state.reads
            state.reads = []
            for read in waiting {
                serve(read, &state, &effects)
            }
        }
    }

    /// Stops the integration (SPEC A3): cancels and discards segment work, deletes the baseline and
    /// link memory, removes every listener, answers pending reads with `.stopped`, and rejects
    /// work until configured again.
    public func stop() {
        let gates = mutate { state, effects in
            if cancelWork(&state, &effects) { effects.log(.verbose, SegmentsLogText.cancelledMeanwhile) }
            forgetSegments(&state, &effects)
            answerReads(&state, with: .failure(SegmentsError(.stopped, "the integration was stopped")))
            state.phase = .stopped
            state.customer = nil
            return state.listeners.removeAll()
        }
        gates.forEach { $0.close() }
    }

    /// Switches to a new anonymous customer (SPEC A1, A2): new cookie, no hard ids; cancels pending
    /// and in-flight segment work, deletes the baseline and link memory, tells listeners of
    /// non-empty categories `[]`, and answers pending reads with `[]`. Listeners stay.
    ///
    /// - Returns: the new customer, or `nil` when not configured.
    @discardableResult
    public func anonymize() -> CustomerIds? {
        mutate { state, effects in
            guard let backend = state.backend else { return nil }
            if cancelWork(&state, &effects) { effects.log(.verbose, SegmentsLogText.cancelledMeanwhile) }
            let customer = CustomerIds(cookie: dependencies.makeCookie())
            state.customer = customer
            save(customer, to: backend, &effects)
            let previous = state.baseline.snapshot?.segments ?? [:]
            forgetSegments(&state, &effects)
            deliver(previous.filter { !$0.value.isEmpty }.mapValues { _ in [] }, firstLoad: nil, &state)
            answerReads(&state, with: .success([:]))
            return customer
        }
    }

    /// Merges hard ids into the current customer; never removes ids (SPEC E1). When the ids change,
    /// a backoff for the old ids is dropped and a reload is requested (SPEC T4).
    ///
    /// - Returns: the customer after the merge, or `nil` when not configured.
    @discardableResult
    public func identify(hardIds: [String: String]) -> CustomerIds? {
        mutate { state, effects in
            guard let backend = state.backend, let current = state.customer else { return nil }
            let merged = current.merging(hardIds: hardIds)
            guard merged != current else { return current }
            state.customer = merged
            save(merged, to: backend, &effects)
            state.reloads.retry?.cancel()
            state.reloads.retry = nil
            state.reloads.retryAttempt = 0
            if !state.listeners.isEmpty { requestReload(&state, &effects) }
            return merged
        }
    }

    /// Tells the engine whether tracked events are uploaded immediately; when they are not and
    /// listeners exist, one warning says segments will lag (SPEC T8).
    public func setTrackingImmediate(_ immediate: Bool) {
        mutate { state, effects in
            state.trackingIsImmediate = immediate
            if immediate { state.warnedTrackingNotImmediate = false }
            warnIfTrackingNotImmediate(&state, &effects)
        }
    }

    func warnIfTrackingNotImmediate(_ state: inout EngineState, _ effects: inout EngineEffects) {
        guard state.backend != nil, !state.trackingIsImmediate, !state.warnedTrackingNotImmediate,
            !state.listeners.isEmpty
        else { return }
        state.warnedTrackingNotImmediate = true
        effects.log(.warning, SegmentsLogText.flushingNotImmediate)
    }

    /// Cancels the debounce and backoff and discards the flight. Returns whether anything was cancelled.
    @discardableResult
    func cancelWork(_ state: inout EngineState, _ effects: inout EngineEffects) -> Bool {
        let reloads = state.reloads
        let cancelled = reloads.debounce != nil || reloads.retry != nil || state.flight != nil
        reloads.debounce?.cancel()
        reloads.retry?.cancel()
        state.reloads = EngineState.Reloads(
            debounceGeneration: reloads.debounceGeneration + 1, retryGeneration: reloads.retryGeneration + 1)
        state.flight = nil
        return cancelled
    }

    /// Deletes the baseline and the link memory, in memory and on disk.
    func forgetSegments(_ state: inout EngineState, _ effects: inout EngineEffects) {
        state.baseline = .empty
        if let backend = state.backend { save(state.baseline, to: backend, &effects) }
    }

    func save(_ customer: CustomerIds, to backend: Backend, _ effects: inout EngineEffects) {
        do { try backend.customerStore.save(customer) } catch {
            effects.log(.error, "Segments: Saving the customer failed: \(error)")
        }
    }

    func save(_ baseline: SegmentBaseline, to backend: Backend, _ effects: inout EngineEffects) {
        do { try backend.baselineStore.save(baseline) } catch {
            effects.log(.error, "Segments: Saving the segments baseline failed: \(error)")
        }
    }
}
