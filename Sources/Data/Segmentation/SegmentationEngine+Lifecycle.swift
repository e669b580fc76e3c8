import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Whether ``configure(_:)`` ran and ``stop()`` did not follow.
    package var isConfigured: Bool {
        read { $0.backend != nil }
    }

    /// The current customer, or `nil` before configuration.
    package var customer: CustomerIds? {
        read { $0.customer }
    }

    /// Configures the engine with an integration's backend (see Behaviour T2, T6).
    ///
    /// Reads the small customer file on the caller's thread (creating a cookie when there is none,
    /// or an empty one), so ``customer`` is right when this returns; on the storage queue instead
    /// when a customer save is still pending there. The baseline loads on the storage queue in the
    /// background (see Behaviour R3); then the initial reload is requested when a listener wants its first
    /// load, and reads made before or meanwhile are served in call order.
    /// Configuring a running engine discards its flight but keeps listeners, what they were told,
    /// and a reload that was pending or owed (it runs on the new backend).
    package func configure(_ backend: Ports) {
        let savePending = core.withLock { $0.pendingCustomerSaves > 0 }
        let customer = savePending
            ? dependencies.storageQueue.sync { backend.customerStore.load() } : backend.customerStore.load()
        var loaded = SegmentationStateMachine.Loaded(customer: customer, baseline: nil, newCookie: nil)
        if loaded.customer?.cookie?.isEmpty ?? true { loaded.newCookie = dependencies.makeCookie() }
        let now = moment
        transition { $0.configure(backend, loaded: loaded, at: now) }
    }

    /// Stops the integration (see Behaviour A3): cancels and discards segment work, deletes the baseline and
    /// link memory, removes every listener (without waiting for a running handler, D7), answers
    /// pending reads with `.stopped`, and rejects work until configured again.
    package func stop() {
        transition { $0.stop() }
    }

    /// Switches to a new anonymous customer (see Behaviour A1, A2): new cookie, no hard ids; cancels pending
    /// and in-flight segment work, deletes the baseline and link memory, tells listeners of
    /// non-empty categories `[]`, and answers pending reads with `[]`. Listeners stay, and a reload
    /// for the new customer is requested when there are any.
    ///
    /// - Returns: the new customer, or `nil` when not configured.
    @discardableResult
    package func anonymize() -> CustomerIds? {
        let newCookie = dependencies.makeCookie()
        let now = moment
        return transition { $0.anonymize(newCookie: newCookie, at: now) }
    }

    /// Merges hard ids into the current customer; never removes ids (see Behaviour E1). When the ids change,
    /// a backoff for the old ids is dropped and a reload is requested (see Behaviour T4).
    ///
    /// - Returns: the customer after the merge, or `nil` when not configured.
    @discardableResult
    package func identify(hardIds: [String: String]) -> CustomerIds? {
        let now = moment
        return transition { $0.identify(hardIds: hardIds, at: now) }
    }

    /// Merges hard ids into the current customer as one step with `record`, which receives the
    /// merged ids and durably records the update (the tracking queue's append): when `record`
    /// throws, nothing changes and the error is rethrown (see Behaviour E1).
    ///
    /// - Returns: the customer after the merge, or `nil` (and `record` is not called) when not
    ///   configured.
    @discardableResult
    package func identify(
        hardIds: [String: String], recordingWith record: (CustomerIds) throws -> Void
    ) throws -> CustomerIds? {
        guard let current = customer else { return nil }
        try record(current.merging(hardIds: hardIds))
        return identify(hardIds: hardIds)
    }

    /// Requests a reload because a tracked event or customer update was uploaded (see Behaviour T3).
    package func reloadAfterUpload() {
        let now = moment
        transition { $0.uploadSucceeded(at: now) }
    }

    /// Tells the engine whether tracked events are uploaded immediately; when they are not and
    /// listeners exist, one warning says segments will lag (see Behaviour T8).
    package func setTrackingImmediate(_ immediate: Bool) {
        transition { $0.setTrackingImmediate(immediate) }
    }
}
