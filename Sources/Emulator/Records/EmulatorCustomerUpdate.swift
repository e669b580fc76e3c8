import Foundation

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
