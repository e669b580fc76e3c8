import Foundation

/// Everything the emulator knows and has been told, as one value guarded by the emulator's lock.
///
/// Customers are keyed by cookie. Events are indexed by the cookie and by each external id they were
/// tracked with, so a customer's events are found without scanning the whole history.
struct EmulatorState: Sendable {
    /// Segment rules, evaluated on fetch when no fixed answer exists for the cookie.
    var rules = EmulatorRuleSet(rules: [])
    /// Fixed fetch answers by cookie; they take precedence over rules.
    var fixedAnswers: [String: [String: [EmulatorSegment]]] = [:]
    /// The exact `Authorization` value project-mode requests must carry, when set.
    var projectAuthorization: String?
    /// The bearer tokens stream-mode requests may carry, when set.
    var streamBearerTokens: Set<String>?
    /// Faults waiting to be played.
    var faults = EmulatorFaultQueue()
    /// The ODP audiences: API keys, fixed answers, rules and the answer for unknown users.
    var odp = EmulatorODPState()

    private(set) var events: [EmulatorEvent] = []
    private(set) var customerUpdates: [EmulatorCustomerUpdate] = []
    private(set) var links: [EmulatorLink] = []
    private(set) var customers: [String: EmulatorCustomer] = [:]

    private let maxLoggedRequests: Int
    private let maxStoredRecords: Int
    private var requestLog: [EmulatorRecordedRequest] = []
    private var cookiesByExternalID: [EmulatorExternalID: Set<String>] = [:]
    private var eventIndicesByCookie: [String: [Int]] = [:]
    private var eventIndicesByExternalID: [EmulatorExternalID: [Int]] = [:]
    /// Cookies in the order their customers appeared, so the oldest can be dropped.
    private var customerOrder: [String] = []

    init(maxLoggedRequests: Int, maxStoredRecords: Int = 100_000) {
        self.maxLoggedRequests = max(1, maxLoggedRequests)
        self.maxStoredRecords = max(1, maxStoredRecords)
    }

    /// Back to a fresh state: rules, answers, authorization, faults and all records cleared.
    mutating func reset() {
        self = EmulatorState(maxLoggedRequests: maxLoggedRequests, maxStoredRecords: maxStoredRecords)
    }

    /// The newest `maxStoredRecords` of each kind once any kind reaches twice that: trimming in
    /// batches keeps recording amortised O(1) while bounding memory: the emulator is a developer
    /// tool, but it listens on a port.
    private mutating func trimRecords() {
        let keep = maxStoredRecords
        if customerUpdates.count >= 2 * keep { customerUpdates.removeFirst(customerUpdates.count - keep) }
        if links.count >= 2 * keep { links.removeFirst(links.count - keep) }
        if events.count >= 2 * keep {
            events.removeFirst(events.count - keep)
            eventIndicesByCookie = [:]
            eventIndicesByExternalID = [:]
            for (position, event) in events.enumerated() { index(event, at: position) }
        }
        if customerOrder.count >= 2 * keep {
            for cookie in customerOrder.prefix(customerOrder.count - keep) { customers.removeValue(forKey: cookie) }
            customerOrder.removeFirst(customerOrder.count - keep)
            cookiesByExternalID = [:]
            for customer in customers.values {
                for id in customer.linkedIds { cookiesByExternalID[id, default: []].insert(customer.cookie) }
            }
        }
    }

    private mutating func index(_ event: EmulatorEvent, at position: Int) {
        if let cookie = event.customerIds["cookie"] {
            eventIndicesByCookie[cookie, default: []].append(position)
        }
        for id in Self.externalIDs(event.customerIds) {
            eventIndicesByExternalID[id, default: []].append(position)
        }
    }

    // MARK: Request log

    /// The logged requests, oldest first, at most `maxLoggedRequests`.
    var loggedRequests: [EmulatorRecordedRequest] {
        Array(requestLog.suffix(maxLoggedRequests))
    }

    mutating func log(_ request: EmulatorRecordedRequest) {
        requestLog.append(request)
        // Trim in batches so that logging stays amortised O(1).
        if requestLog.count >= 2 * maxLoggedRequests {
            requestLog.removeFirst(requestLog.count - maxLoggedRequests)
        }
    }

    mutating func clearRequestLog() {
        requestLog.removeAll()
    }

    // MARK: Customers and events

    mutating func record(_ event: EmulatorEvent) {
        index(event, at: events.count)
        events.append(event)
        linkIds(in: event.customerIds)
        trimRecords()
    }

    mutating func record(_ update: EmulatorCustomerUpdate) {
        customerUpdates.append(update)
        linkIds(in: update.customerIds)
        for cookie in cookies(for: update.customerIds) {
            customers[cookie]?.properties.merge(update.properties) { _, new in new }
        }
        trimRecords()
    }

    mutating func record(_ link: EmulatorLink) {
        links.append(link)
        var ids = link.externalIds
        ids["cookie"] = link.cookie
        linkIds(in: ids)
        trimRecords()
    }

    /// The events that count for a cookie: tracked with it, or with an external id linked to it.
    func events(forCookie cookie: String) -> [EmulatorEvent] {
        var indices = Set(eventIndicesByCookie[cookie] ?? [])
        for id in customers[cookie]?.linkedIds ?? [] {
            indices.formUnion(eventIndicesByExternalID[id] ?? [])
        }
        return indices.sorted().map { events[$0] }
    }

    /// The fetch answer for a cookie: its fixed answer, else the rules over its events.
    func segments(forCookie cookie: String) -> [String: [EmulatorSegment]] {
        if let fixed = fixedAnswers[cookie] { return fixed }
        return rules.segments(for: events(forCookie: cookie))
    }

    /// Makes the cookie (if any) a customer and links every other id of the map to it.
    private mutating func linkIds(in customerIds: [String: String]) {
        guard let cookie = customerIds["cookie"], !cookie.isEmpty else { return }
        let ids = Self.externalIDs(customerIds)
        if customers[cookie] == nil { customerOrder.append(cookie) }
        customers[cookie, default: EmulatorCustomer(cookie: cookie)].linkedIds.formUnion(ids)
        for id in ids { cookiesByExternalID[id, default: []].insert(cookie) }
    }

    /// The cookie of the map, or else every cookie linked to one of its external ids.
    private func cookies(for customerIds: [String: String]) -> Set<String> {
        if let cookie = customerIds["cookie"], !cookie.isEmpty { return [cookie] }
        return Self.externalIDs(customerIds).reduce(into: Set<String>()) { result, id in
            result.formUnion(cookiesByExternalID[id] ?? [])
        }
    }

    private static func externalIDs(_ customerIds: [String: String]) -> Set<EmulatorExternalID> {
        Set(customerIds.compactMap { name, value in
            name == "cookie" || value.isEmpty ? nil : EmulatorExternalID(name: name, value: value)
        })
    }
}
