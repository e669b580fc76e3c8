import Foundation

/// Which integration a request addressed: a project (by token) or a Data Hub stream (by id).
public enum EmulatorIntegration: Hashable, Sendable {
    /// `/webxp/projects/{token}/…` and `/track/v2/projects/{token}/…`.
    case project(token: String)
    /// `/webxp/streams/{id}/…` and `/track/u/v1/…?stream_id={id}`.
    case stream(id: String)
}

/// One customer id other than the cookie, e.g. `registered` = `jane@example.com`.
public struct EmulatorExternalID: Hashable, Sendable {
    /// The id's name, e.g. `registered`.
    public var name: String
    /// The id's value.
    public var value: String

    /// Creates an id.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A tracked event as received on the events endpoint.
public struct EmulatorEvent: Hashable, Sendable {
    /// The integration the event was sent to.
    public var integration: EmulatorIntegration
    /// `event_type`.
    public var eventType: String
    /// `customer_ids`, the cookie included.
    public var customerIds: [String: String]
    /// `properties` (empty when absent).
    public var properties: [String: EmulatorJSON]
    /// `timestamp` in Unix seconds, when sent.
    public var timestamp: Double?
    /// When the emulator received it.
    public var receivedAt: Date

    /// Creates an event record.
    public init(integration: EmulatorIntegration, eventType: String, customerIds: [String: String],
                properties: [String: EmulatorJSON] = [:], timestamp: Double? = nil, receivedAt: Date = Date()) {
        self.integration = integration
        self.eventType = eventType
        self.customerIds = customerIds
        self.properties = properties
        self.timestamp = timestamp
        self.receivedAt = receivedAt
    }
}

/// A customer update (identify) as received on the customers endpoint.
public struct EmulatorCustomerUpdate: Hashable, Sendable {
    /// The integration the update was sent to.
    public var integration: EmulatorIntegration
    /// `customer_ids`, the cookie included.
    public var customerIds: [String: String]
    /// `properties` (empty when absent).
    public var properties: [String: EmulatorJSON]
    /// `timestamp` in Unix seconds, when sent.
    public var timestamp: Double?
    /// When the emulator received it.
    public var receivedAt: Date

    /// Creates a customer update record.
    public init(integration: EmulatorIntegration, customerIds: [String: String],
                properties: [String: EmulatorJSON] = [:], timestamp: Double? = nil, receivedAt: Date = Date()) {
        self.integration = integration
        self.customerIds = customerIds
        self.properties = properties
        self.timestamp = timestamp
        self.receivedAt = receivedAt
    }
}

/// A link-ids call: external ids attached to a cookie.
public struct EmulatorLink: Hashable, Sendable {
    /// The integration the call was sent to.
    public var integration: EmulatorIntegration
    /// The cookie from the path.
    public var cookie: String
    /// `external_ids` from the body.
    public var externalIds: [String: String]
    /// When the emulator received it.
    public var receivedAt: Date

    /// Creates a link record.
    public init(integration: EmulatorIntegration, cookie: String, externalIds: [String: String],
                receivedAt: Date = Date()) {
        self.integration = integration
        self.cookie = cookie
        self.externalIds = externalIds
        self.receivedAt = receivedAt
    }
}

/// What the emulator knows about one customer, keyed by cookie.
public struct EmulatorCustomer: Hashable, Sendable {
    /// The customer's cookie.
    public var cookie: String
    /// Every external id ever linked to the cookie, by link-ids or by `customer_ids` in a tracking body.
    public var linkedIds: Set<EmulatorExternalID>
    /// The customer's properties, merged from customer updates (later values win).
    public var properties: [String: EmulatorJSON]

    /// Creates a customer record.
    public init(cookie: String, linkedIds: Set<EmulatorExternalID> = [], properties: [String: EmulatorJSON] = [:]) {
        self.cookie = cookie
        self.linkedIds = linkedIds
        self.properties = properties
    }
}
