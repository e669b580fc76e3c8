import Foundation

/// Everything the emulator knows and has been told, as one value guarded by the emulator's lock.
///
/// Customers are keyed by cookie. Events are indexed by the cookie and by each external id they were
/// tracked with, so a customer's events are found without scanning the whole history.
///
/// What it keeps is bounded twice: in records (``EmulatorLimits/maxStoredRecords``,
/// ``EmulatorLimits/maxLoggedRequests``; the oldest go first) and in bytes
/// (``EmulatorByteCost``): the request log drops its oldest entries past
/// ``EmulatorLimits/maxLoggedBytes``, and a record that would take the store past
/// ``EmulatorLimits/maxStoredBytes``, or a customer's properties past
/// ``EmulatorLimits/maxCustomerPropertyBytes``, is refused whole (``StoreOutcome``).
struct EmulatorState: Sendable {
    /// Whether a record was kept.
    enum StoreOutcome: Equatable, Sendable {
        case stored
        /// Keeping it would take the store past ``EmulatorLimits/maxStoredBytes``; nothing changed.
        case storageFull
        /// The update would take this customer's properties past
        /// ``EmulatorLimits/maxCustomerPropertyBytes``; nothing changed.
        case customerPropertiesTooLarge(cookie: String)
    }

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

    /// The bytes of every kept event, update, link and customer (``EmulatorByteCost``).
    private(set) var storedBytes = 0
    /// The bytes of the request log's live entries.
    private(set) var loggedBytes = 0

    private let limits: EmulatorLimits
    private var maxLoggedRequests: Int { max(1, limits.maxLoggedRequests) }
    private var maxStoredRecords: Int { max(1, limits.maxStoredRecords) }
    /// The log, oldest first; entries before `logHead` were dropped (and emptied, so their bytes
    /// are freed at once); they are compacted away in batches.
    private var requestLog: [EmulatorRecordedRequest?] = []
    private var logHead = 0
    /// Each customer's cost (cookie, linked ids and properties) and its properties' share.
    private var customerBytes: [String: Int] = [:]
    private var customerPropertyBytes: [String: Int] = [:]
    private var cookiesByExternalID: [EmulatorExternalID: Set<String>] = [:]
    private var eventIndicesByCookie: [String: [Int]] = [:]
    private var eventIndicesByExternalID: [EmulatorExternalID: [Int]] = [:]
    /// Cookies in the order their customers appeared, so the oldest can be dropped.
    private var customerOrder: [String] = []

    init(limits: EmulatorLimits) {
        self.limits = limits
    }

    init(maxLoggedRequests: Int, maxStoredRecords: Int = 100_000) {
        self.init(limits: EmulatorLimits(maxLoggedRequests: maxLoggedRequests, maxStoredRecords: maxStoredRecords))
    }

    /// Back to a fresh state: rules, answers, authorization, faults and all records cleared.
    mutating func reset() {
        self = EmulatorState(limits: limits)
    }

    /// The newest `maxStoredRecords` of each kind once any kind reaches twice that: trimming in
    /// batches keeps recording amortised O(1) while bounding memory: the emulator is a developer
    /// tool, but it listens on a port.
    private mutating func trimRecords() {
        let keep = maxStoredRecords
        if customerUpdates.count >= 2 * keep {
            let dropped = customerUpdates.count - keep
            storedBytes -= customerUpdates.prefix(dropped).reduce(0) { $0 + EmulatorByteCost.of($1) }
            customerUpdates.removeFirst(dropped)
        }
        if links.count >= 2 * keep {
            let dropped = links.count - keep
            storedBytes -= links.prefix(dropped).reduce(0) { $0 + EmulatorByteCost.of($1) }
            links.removeFirst(dropped)
        }
        if events.count >= 2 * keep {
            let dropped = events.count - keep
            storedBytes -= events.prefix(dropped).reduce(0) { $0 + EmulatorByteCost.of($1) }
            events.removeFirst(dropped)
            eventIndicesByCookie = [:]
            eventIndicesByExternalID = [:]
            for (position, event) in events.enumerated() { index(event, at: position) }
        }
        if customerOrder.count >= 2 * keep {
            for cookie in customerOrder.prefix(customerOrder.count - keep) {
                customers.removeValue(forKey: cookie)
                storedBytes -= customerBytes.removeValue(forKey: cookie) ?? 0
                customerPropertyBytes.removeValue(forKey: cookie)
            }
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

    /// The logged requests, oldest first: at most `maxLoggedRequests`, at most `maxLoggedBytes`
    /// (but always the newest).
    var loggedRequests: [EmulatorRecordedRequest] {
        requestLog[logHead...].compactMap { $0 }
    }

    mutating func log(_ request: EmulatorRecordedRequest) {
        requestLog.append(request)
        loggedBytes += EmulatorByteCost.of(request)
        while requestLog.count - logHead > maxLoggedRequests
            || (loggedBytes > limits.maxLoggedBytes && requestLog.count - logHead > 1) {
            loggedBytes -= requestLog[logHead].map(EmulatorByteCost.of) ?? 0
            requestLog[logHead] = nil
            logHead += 1
        }
        // Compact in batches so that logging stays amortised O(1).
        if logHead >= 64 && logHead * 2 >= requestLog.count {
            requestLog.removeFirst(logHead)
            logHead = 0
        }
    }

    mutating func clearRequestLog() {
        requestLog.removeAll()
        logHead = 0
        loggedBytes = 0
    }

    // MARK: Customers and events

    @discardableResult
    mutating func record(_ event: EmulatorEvent) -> StoreOutcome {
        guard fits(EmulatorByteCost.of(event) + identityGrowthBound(event.customerIds)) else { return .storageFull }
        index(event, at: events.count)
        events.append(event)
        storedBytes += EmulatorByteCost.of(event)
        linkIds(in: event.customerIds)
        trimRecords()
        return .stored
    }

    @discardableResult
    mutating func record(_ update: EmulatorCustomerUpdate) -> StoreOutcome {
        // Decide before changing anything: all or nothing.
        var growth: [(cookie: String, bytes: Int)] = []
        for cookie in cookies(for: update.customerIds).sorted() {
            let bytes = Self.propertyGrowth(of: customers[cookie]?.properties ?? [:], merging: update.properties)
            let current = customerPropertyBytes[cookie] ?? EmulatorByteCost.of(properties: [:])
            guard current + bytes <= limits.maxCustomerPropertyBytes else {
                return .customerPropertiesTooLarge(cookie: cookie)
            }
            growth.append((cookie, bytes))
        }
        let cost = EmulatorByteCost.of(update)
        guard fits(cost + identityGrowthBound(update.customerIds) + growth.reduce(0) { $0 + max(0, $1.bytes) }) else {
            return .storageFull
        }
        customerUpdates.append(update)
        storedBytes += cost
        linkIds(in: update.customerIds)
        for (cookie, bytes) in growth where customers[cookie] != nil {
            customers[cookie]?.properties.merge(update.properties) { _, new in new }
            customerPropertyBytes[cookie, default: EmulatorByteCost.of(properties: [:])] += bytes
            customerBytes[cookie, default: 0] += bytes
            storedBytes += bytes
        }
        trimRecords()
        return .stored
    }

    @discardableResult
    mutating func record(_ link: EmulatorLink) -> StoreOutcome {
        var ids = link.externalIds
        ids["cookie"] = link.cookie
        guard fits(EmulatorByteCost.of(link) + identityGrowthBound(ids)) else { return .storageFull }
        links.append(link)
        storedBytes += EmulatorByteCost.of(link)
        linkIds(in: ids)
        trimRecords()
        return .stored
    }

    /// Whether `bytes` more stay within ``EmulatorLimits/maxStoredBytes``.
    private func fits(_ bytes: Int) -> Bool {
        let (total, overflow) = storedBytes.addingReportingOverflow(bytes)
        return !overflow && total <= limits.maxStoredBytes
    }

    /// The most ``linkIds(in:)`` can add for these ids: a new customer with all of them linked.
    private static func identityGrowth(_ customerIds: [String: String]) -> Int {
        EmulatorByteCost.recordOverhead + EmulatorByteCost.of(properties: [:]) + EmulatorByteCost.of(customerIds)
    }

    private func identityGrowthBound(_ customerIds: [String: String]) -> Int {
        guard let cookie = customerIds["cookie"], !cookie.isEmpty else { return 0 }
        return Self.identityGrowth(customerIds)
    }

    /// How many bytes merging `update` into `properties` adds (negative when it shrinks them).
    private static func propertyGrowth(of properties: [String: EmulatorJSON],
                                       merging update: [String: EmulatorJSON]) -> Int {
        update.reduce(0) { sum, entry in
            if let old = properties[entry.key] {
                return sum + EmulatorByteCost.of(entry.value) - EmulatorByteCost.of(old)
            }
            return sum + EmulatorByteCost.of(entry.key) + EmulatorByteCost.of(entry.value)
        }
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
        if customers[cookie] == nil {
            customerOrder.append(cookie)
            let customer = EmulatorCustomer(cookie: cookie)
            customers[cookie] = customer
            let cost = EmulatorByteCost.of(customer)
            customerBytes[cookie] = cost
            customerPropertyBytes[cookie] = EmulatorByteCost.of(properties: [:])
            storedBytes += cost
        }
        for id in ids where customers[cookie]?.linkedIds.insert(id).inserted == true {
            let cost = EmulatorByteCost.of(id)
            customerBytes[cookie, default: 0] += cost
            storedBytes += cost
        }
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
