import Foundation

extension SegmentsEmulator {
    /// The logged requests, oldest first (at most ``EmulatorLimits/maxLoggedRequests`` and
    /// ``EmulatorLimits/maxLoggedBytes``, but always the newest). Every request
    /// that parsed is logged, including refused ones (401, 403, 404, 405, 413, 507) and faulted ones; bytes that never formed a request
    /// (garbage, oversized heads or bodies) are answered with a 4xx but not logged.
    public var requests: [EmulatorRecordedRequest] {
        state.withLock { $0.loggedRequests }
    }

    /// The logged requests routed to `route`, oldest first.
    public func requests(on route: EmulatorRoute) -> [EmulatorRecordedRequest] {
        requests.filter { route == .any || $0.route == route }
    }

    /// Empties the request log and nothing else.
    public func clearRequestLog() {
        state.withLock { $0.clearRequestLog() }
    }

    /// The events received, oldest first: every one, until ``EmulatorLimits/maxStoredRecords`` is
    /// exceeded; then at least that many of the newest. An event that did not fit
    /// ``EmulatorLimits/maxStoredBytes`` was answered 507 and is not here.
    public var events: [EmulatorEvent] {
        state.withLock { $0.events }
    }

    /// The events that count for a cookie: tracked with it, or with an external id linked to it.
    public func events(forCookie cookie: String) -> [EmulatorEvent] {
        state.withLock { $0.events(forCookie: cookie) }
    }

    /// The customer updates received, oldest first (bounded like ``events``; an update refused
    /// with 413 by ``EmulatorLimits/maxCustomerPropertyBytes`` is not here).
    public var customerUpdates: [EmulatorCustomerUpdate] {
        state.withLock { $0.customerUpdates }
    }

    /// The link-ids calls received, oldest first (bounded like ``events``).
    public var links: [EmulatorLink] {
        state.withLock { $0.links }
    }

    /// Every customer known by cookie, sorted by cookie.
    public var customers: [EmulatorCustomer] {
        state.withLock { $0.customers.values.sorted { $0.cookie < $1.cookie } }
    }

    /// The customer with this cookie, once a link-ids call or a tracking body named the cookie.
    public func customer(cookie: String) -> EmulatorCustomer? {
        state.withLock { $0.customers[cookie] }
    }

    /// Back to the state of a new emulator: rules, fixed answers, authorization, faults, the request
    /// log, events, customer updates, links and customers are all cleared. The server keeps running.
    public func reset() {
        state.withLock { $0.reset() }
    }
}
