import SegmentsDomain

/// Keeps the customer's ids in memory only: for apps that want nothing on disk (the customer is
/// then a new anonymous one on every launch).
public final class InMemoryCustomerStore: CustomerStore {
    private let customer: Locked<CustomerIds?>

    /// A store holding `customer`, or nothing.
    public init(customer: CustomerIds? = nil) {
        self.customer = Locked(customer)
    }

    /// The stored customer, or `nil`.
    public func load() -> CustomerIds? {
        customer.value
    }

    /// Replaces the stored customer.
    public func save(_ customer: CustomerIds) {
        self.customer.withLock { $0 = customer }
    }
}
