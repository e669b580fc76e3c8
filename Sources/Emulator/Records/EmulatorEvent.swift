import Foundation

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
