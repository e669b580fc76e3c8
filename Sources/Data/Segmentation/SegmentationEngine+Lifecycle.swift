import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Whether ``configure(_:)`` ran and ``stop()`` did not follow.
    public var isConfigured: Bool {
        read { $0.backend != nil }
    }

    /// The current customer, or `nil` before configuration.
    public var customer: CustomerIds? {
        read { $0.customer }
    }

    /// Configures the engine with an integration's backend (SPEC T2, T6).
    ///
    /// Loads the customer (creating a cookie when there is none, or an empty one) and the
    /// baseline on the backend's storage queue, after any save still pending there (also one of an
    /// earlier client on the same stores), then requests the
    /// initial reload when a listener wants its first load, and serves reads made before.
    /// Configuring a running engine discards its flight but keeps listeners, what they were told,
    /// and a reload that was pending or owed (it runs on the new backend).
    public func configure(_ backend: Backend) {
        var loaded = storageQueue(of: backend).sync {
            SegmentationStateMachine.Loaded(
                customer: backend.customerStore.load(), baseline: backend.baselineStore.load(), newCookie: nil)
        }
        if loaded.customer?.cookie?.isEmpty ?? true { loaded.newCookie = dependencies.makeCookie() }
        let now = moment
        transition { $0.configure(backend, loaded: loaded, at: now) }
    }

    /// Stops the integration (SPEC A3): cancels and discards segment work, deletes the baseline and
    /// link memory, removes every listener (without waiting for a running handler, D7), answers
    /// pending reads with `.stopped`, and rejects work until configured again.
    public func stop() {
        transition { $0.stop() }
    }

    /// Switches to a new anonymous customer (SPEC A1, A2): new cookie, no hard ids; cancels pending
    /// and in-flight segment work, deletes the baseline and link memory, tells listeners of
    /// non-empty categories `[]`, and answers pending reads with `[]`. Listeners stay, and a reload
    /// for the new customer is requested when there are any.
    ///
    /// - Returns: the new customer, or `nil` when not configured.
    @discardableResult
    public func anonymize() -> CustomerIds? {
        let newCookie = dependencies.makeCookie()
        let now = moment
        return transition { $0.anonymize(newCookie: newCookie, at: now) }
    }

    /// Merges hard ids into the current customer; never removes ids (SPEC E1). When the ids change,
    /// a backoff for the old ids is dropped and a reload is requested (SPEC T4).
    ///
    /// - Returns: the customer after the merge, or `nil` when not configured.
    @discardableResult
    public func identify(hardIds: [String: String]) -> CustomerIds? {
        let now = moment
        return transition { $0.identify(hardIds: hardIds, at: now) }
    }

    /// Merges hard ids into the current customer as one step with `record`, which receives the
    /// merged ids and durably records the update (the tracking queue's append): when `record`
    /// throws, nothing changes and the error is rethrown (SPEC E1).
    ///
    /// - Returns: the customer after the merge, or `nil` (and `record` is not called) when not
    ///   configured.
    @discardableResult
    public func identify(
        hardIds: [String: String], recordingWith record: (CustomerIds) throws -> Void
    ) throws -> CustomerIds? {
        guard let current = customer else { return nil }
        try record(current.merging(hardIds: hardIds))
        return identify(hardIds: hardIds)
    }

    /// Requests a reload because a tracked event or customer update was uploaded (SPEC T3).
    public func reloadAfterUpload() {
        let now = moment
        transition { $0.uploadSucceeded(at: now) }
    }

    /// Tells the engine whether tracked events are uploaded immediately; when they are not and
    /// listeners exist, one warning says segments will lag (SPEC T8).
    public func setTrackingImmediate(_ immediate: Bool) {
        transition { $0.setTrackingImmediate(immediate) }
    }
}
