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
    /// The item's properties. An item read back from the event queue's file holds them as the
    /// JSON text it was read from and decodes them here, each time (<doc:Behaviour#P7>).
    public var properties: [String: JSONValue] { storedProperties.values }
    /// When the item happened.
    public let timestamp: Date
    /// How many uploads of it failed permanently so far; at the 10th the item is dropped
    /// (<doc:Behaviour#E3>).
    public var failedAttempts: Int
    /// The properties as held in memory: the values, or the JSON text they were read from.
    package let storedProperties: StoredProperties

    /// Creates an item.
    public init(
        id: UUID = UUID(), kind: Kind, customerIds: CustomerIds, properties: [String: JSONValue],
        timestamp: Date, failedAttempts: Int = 0
    ) {
        self.init(
            id: id, kind: kind, customerIds: customerIds, storedProperties: .values(properties), timestamp: timestamp,
            failedAttempts: failedAttempts)
    }

    /// Creates an item holding its properties as `storedProperties` (the event journal's reader
    /// passes the checked text of an item read back).
    package init(
        id: UUID, kind: Kind, customerIds: CustomerIds, storedProperties: StoredProperties, timestamp: Date,
        failedAttempts: Int
    ) {
        self.id = id
        self.kind = kind
        self.customerIds = customerIds
        self.storedProperties = storedProperties
        self.timestamp = timestamp
        self.failedAttempts = failedAttempts
    }

    /// Whether both are the same item in the same state: equal fields and equal property values,
    /// however each holds them.
    public static func == (lhs: TrackedEvent, rhs: TrackedEvent) -> Bool {
        lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.customerIds == rhs.customerIds && lhs.timestamp == rhs.timestamp
            && lhs.failedAttempts == rhs.failedAttempts && lhs.storedProperties == rhs.storedProperties
    }

    /// Hashes every field ``==(_:_:)`` compares but the properties: equal items still hash alike,
    /// and an item read back from the queue's file is not decoded to be hashed (its id tells items
    /// apart anyway).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(kind)
        hasher.combine(customerIds)
        hasher.combine(timestamp)
        hasher.combine(failedAttempts)
    }

    private enum CodingKeys: String, CodingKey {
        case id, kind, customerIds, properties, timestamp, failedAttempts
    }

    /// Decodes the item as it was encoded: its fields, the properties as an object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(UUID.self, forKey: .id), kind: try container.decode(Kind.self, forKey: .kind),
            customerIds: try container.decode(CustomerIds.self, forKey: .customerIds),
            storedProperties: .values(try container.decode([String: JSONValue].self, forKey: .properties)),
            timestamp: try container.decode(Date.self, forKey: .timestamp),
            failedAttempts: try container.decode(Int.self, forKey: .failedAttempts))
    }

    /// Encodes the fields, the properties as an object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(customerIds, forKey: .customerIds)
        try container.encode(properties, forKey: .properties)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(failedAttempts, forKey: .failedAttempts)
    }
}
