import Foundation

/// One queued item of the tracking pipeline: an event or a customer update (<doc:Behaviour#E1>).
///
/// It carries the customer ids of the moment it was tracked, so an upload after `identify` or
/// `anonymize` still reports it for the right customer.
public struct TrackedEvent: Hashable, Sendable, Codable, Identifiable {
    /// What the item uploads.
    public enum Kind: Hashable, Sendable, Codable {
        /// An event of the given type (`purchase`, `view_item`, …).
        case event(type: String)
        /// A customer update from `identifyCustomer`.
        case customerUpdate
    }

    /// A unique id, stable across restarts.
    public let id: UUID
    /// Event or customer update.
    public let kind: Kind
    /// The customer's ids when the item was tracked.
    public let customerIds: CustomerIds
    /// The item's properties.
    public let properties: [String: JSONValue]
    /// When the item happened.
    public let timestamp: Date
    /// How many uploads of it failed permanently so far; at the 10th the item is dropped
    /// (<doc:Behaviour#E3>).
    public var failedAttempts: Int

    /// Creates an item.
    public init(
        id: UUID = UUID(), kind: Kind, customerIds: CustomerIds, properties: [String: JSONValue],
        timestamp: Date, failedAttempts: Int = 0
    ) {
        self.id = id
        self.kind = kind
        self.customerIds = customerIds
        self.properties = properties
        self.timestamp = timestamp
        self.failedAttempts = failedAttempts
    }
}
