import Foundation
import SegmentsDomain

/// Properties added to every tracked event and, when the configuration allows it, to every
/// customer update (<doc:Behaviour#E8>, Exponea's `defaultProperties` and
/// `allowDefaultCustomerProperties`). The item's own keys win.
package struct DefaultProperties: Sendable, Equatable {
    /// The properties; empty when there are none.
    package var properties: [String: JSONValue] = [:]
    /// Whether customer updates get them too (the configuration's `allowDefaultCustomerProperties`;
    /// `true` until a configuration says otherwise, as in the Exponea SDK).
    package var forCustomerUpdates = true

    package init(properties: [String: JSONValue] = [:], forCustomerUpdates: Bool = true) {
        self.properties = properties
        self.forCustomerUpdates = forCustomerUpdates
    }

    /// An event's properties with the defaults added; the event's own keys win.
    package func event(_ own: [String: JSONValue]) -> [String: JSONValue] {
        properties.isEmpty ? own : properties.merging(own) { _, own in own }
    }

    /// A customer update's properties, with the defaults added when allowed; its own keys win.
    package func customerUpdate(_ own: [String: JSONValue]) -> [String: JSONValue] {
        forCustomerUpdates ? event(own) : own
    }

    /// Takes what a configuration names: its properties, when it names them (`nil` keeps the ones
    /// set before, as for the flushing mode), and whether customer updates get them.
    mutating func configure(_ named: ConfiguredDefaults) {
        if let named = named.properties { properties = named }
        forCustomerUpdates = named.forCustomerUpdates
    }

    /// The properties an item of `kind` is queued with.
    package func applied(to own: [String: JSONValue], for kind: TrackedEvent.Kind) -> [String: JSONValue] {
        switch kind {
        case .event: event(own)
        case .customerUpdate: customerUpdate(own)
        }
    }
}

/// What a configuration says of default properties (<doc:Behaviour#E8>).
package struct ConfiguredDefaults: Sendable, Equatable {
    /// The properties it names; `nil` keeps the ones in force.
    package var properties: [String: JSONValue]?
    /// Whether customer updates get them (Exponea's `allowDefaultCustomerProperties`).
    package var forCustomerUpdates: Bool

    package init(properties: [String: JSONValue]?, forCustomerUpdates: Bool) {
        self.properties = properties
        self.forCustomerUpdates = forCustomerUpdates
    }
}

/// A tracking call made before the client's first `configure` (<doc:Behaviour#E1>, rev 4): kept in
/// memory, in call order, and applied when `configure` runs.
package struct HeldCall: Sendable {
    /// What the call was.
    package enum Kind: Sendable, Equatable {
        /// `trackEvent` (or `trackPayment`) of this type.
        case event(type: String)
        /// `identifyCustomer`: these hard ids merge into the configured customer.
        case identify(hardIds: [String: String])
        /// `anonymize`: the customer from there on is a new anonymous one with this cookie.
        case anonymize(cookie: String)
    }

    package var kind: Kind
    /// The properties, already accepted (<doc:Behaviour#E6>).
    package var properties: [String: JSONValue]
    /// When it happened; `nil` is the moment of the call (the transition that holds it).
    package var timestamp: Date?

    package init(_ kind: Kind, properties: [String: JSONValue] = [:], timestamp: Date? = nil) {
        self.kind = kind
        self.properties = properties
        self.timestamp = timestamp
    }
}

/// An item to queue in the configured pipeline, decided by `configure` for a call made before it:
/// stamped with the customer of its place in the order, its defaults added.
package struct WaitingItem: Sendable, Equatable {
    package var kind: TrackedEvent.Kind
    package var properties: [String: JSONValue]
    package var timestamp: Date
    package var customer: CustomerIds
}

/// What `hold` did with a call made while no configuration is in force.
package enum HoldOutcome: Sendable, Equatable {
    /// Kept; it is applied when `configure` runs.
    case held
    /// Refused: ``WaitingCalls/capacity`` calls wait already.
    case full
    /// A configuration is in force (it came meanwhile): track the call as usual.
    case configured
    /// Stopped: work is refused until configured again (<doc:Behaviour#A3>).
    case stopped
}

/// The calls made before the first `configure`, in call order (<doc:Behaviour#E1>, rev 4): part of
/// the lifecycle's state, decided in the same order as the other lifecycle calls
/// (<doc:Behaviour#A4>). They live in memory only: a process that ends first loses them.
package struct WaitingCalls: Sendable {
    /// At most this many calls wait; more are refused.
    package static let capacity = 1_000

    private(set) var calls: [HeldCall] = []
    /// How many `configure` callers are queuing the items of waiting calls: while one is, calls
    /// wait here too, so that none overtakes them (<doc:Behaviour#A4>).
    var replayers = 0

    var isEmpty: Bool { calls.isEmpty }
    var count: Int { calls.count }

    /// Keeps `call`, stamped `wall` when it has no timestamp; `false` at the capacity.
    mutating func hold(_ call: HeldCall, at wall: Date) -> Bool {
        guard calls.count < Self.capacity else { return false }
        var call = call
        if call.timestamp == nil { call.timestamp = wall }
        calls.append(call)
        return true
    }

    /// Every call, the list emptied.
    mutating func takeAll() -> [HeldCall] {
        defer { calls = [] }
        return calls
    }

    /// The calls before the first anonymize (or every call), taken off the list; when the first
    /// call is an anonymize, it alone.
    mutating func takeBatch() -> [HeldCall] {
        if case .anonymize = calls.first?.kind { return [calls.removeFirst()] }
        let end = calls.firstIndex { if case .anonymize = $0.kind { true } else { false } } ?? calls.endIndex
        defer { calls.removeSubrange(..<end) }
        return Array(calls[..<end])
    }

    /// Forgets every call (stop, or the client let go of).
    mutating func forget() {
        calls = []
        replayers = 0
    }

    /// What the calls come to when applied, in order, to `customer`, the configured one: the items
    /// to queue, each stamped with the customer of its place in the order (an identify's hard ids
    /// merge into it and stamp its own update; an anonymize replaces it with a new anonymous
    /// customer, without the ids merged before), the customer at the end, and whether an anonymize
    /// was among them.
    static func apply(
        _ calls: [HeldCall], to customer: CustomerIds, defaults: DefaultProperties
    ) -> (items: [WaitingItem], customer: CustomerIds, anonymized: Bool) {
        var current = customer
        var anonymized = false
        var items: [WaitingItem] = []
        items.reserveCapacity(calls.count)
        for call in calls {
            let timestamp = call.timestamp ?? .distantPast
            switch call.kind {
            case .event(let type):
                items.append(WaitingItem(
                    kind: .event(type: type), properties: defaults.event(call.properties), timestamp: timestamp, customer: current))
            case .identify(let hardIds):
                current = current.merging(hardIds: hardIds)
                items.append(WaitingItem(
                    kind: .customerUpdate, properties: defaults.customerUpdate(call.properties), timestamp: timestamp,
                    customer: current))
            case .anonymize(let cookie):
                current = CustomerIds(cookie: cookie)
                anonymized = true
            }
        }
        return (items, current, anonymized)
    }
}

/// The items `configure` decided for the calls made before it, with the pipeline to queue them in:
/// the caller of `configure` queues them before it returns, so a call it makes next comes after
/// them (<doc:Behaviour#E1>, <doc:Behaviour#A4>).
package struct WaitingReplay: Sendable {
    package var tracking: TrackingPipeline?
    package var storageID: String?
    package var items: [WaitingItem]
}

extension LifecycleStateMachine {
    /// Whether tracking calls wait: before the first configure, and while its caller queues the
    /// items of the calls made before it (so that none overtakes them, <doc:Behaviour#A4>).
    var holdsCalls: Bool {
        if case .unconfigured = state { return true }
        return waiting.replayers > 0 && isConfigured
    }

    /// A tracking call made while no configuration is in force (<doc:Behaviour#E1>, rev 4): kept
    /// before the first configure (at most ``WaitingCalls/capacity``), and while that configure's
    /// caller queues the items of the calls made before it; refused after a stop
    /// (<doc:Behaviour#A3>); otherwise the caller tracks it as usual.
    mutating func hold(_ call: HeldCall, at wall: Date) -> HoldOutcome {
        switch state {
        case .unconfigured: waiting.hold(call, at: wall) ? .held : .full
        case .loading, .running: waiting.replayers > 0 ? (waiting.hold(call, at: wall) ? .held : .full) : .configured
        case .stopped: .stopped
        case .modifying: preconditionFailure("a lifecycle transition started while another one was modifying the state")
        }
    }

    /// What the caller of `configure` queues next, once it queued the items it had
    /// (<doc:Behaviour#E1>, <doc:Behaviour#A4>).
    enum ReplayStep: Sendable {
        /// Nothing more: calls no longer wait.
        case done
        /// A held anonymize, carried out now in its place of the order.
        case anonymize(cookie: String)
        /// The items of the calls held meanwhile, stamped with the current customer (an identify's
        /// ids merged into it: `changed`, and saved).
        case items(WaitingReplay, changed: Bool, [Action])
    }

    /// Sets the default properties at run time (<doc:Behaviour#E8>): items stamped from here on get
    /// them; a configure that names none keeps them.
    mutating func setDefaultProperties(_ properties: [String: JSONValue]) {
        defaults.properties = properties
    }
}
