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
