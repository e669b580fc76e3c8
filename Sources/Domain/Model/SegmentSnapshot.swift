import Foundation

/// The segments of one customer as last fetched: the baseline of change detection (<doc:Behaviour#D1>).
public struct SegmentSnapshot: Hashable, Sendable, Codable {
    /// The customer the segments were fetched for.
    public var customer: CustomerIds
    /// The fetched segments by category; an absent category means no segments.
    public var segments: SegmentsByCategory
    /// When the fetch completed, on the SDK's clock.
    public var fetchedAt: Date

    /// Creates a snapshot.
    public init(customer: CustomerIds, segments: SegmentsByCategory, fetchedAt: Date) {
        self.customer = customer
        self.segments = segments
        self.fetchedAt = fetchedAt
    }

    /// The segments of one category, `[]` when absent.
    public func segments(in category: SegmentCategory) -> [Segment] {
        segments[category] ?? []
    }
}

/// Everything the engine persists about segments: the baseline and the memory of which customers'
/// ids were linked successfully (<doc:Behaviour#C4>, <doc:Behaviour#D1>).
public struct SegmentBaseline: Hashable, Sendable, Codable {
    /// The last successful fetch, or `nil` when there is none.
    public var snapshot: SegmentSnapshot?
    /// Customers whose exact ids were linked to their cookie successfully.
    public var linkedCustomers: Set<CustomerIds>
    /// The integration the snapshot and the link memory belong to (an opaque digest of the backend
    /// and its base URL), or `nil` when not known — a baseline saved by an earlier version,
    /// which any integration adopts. One integration never uses another's baseline: a storage
    /// folder shared by two projects answers neither with the other's segments (<doc:Behaviour#D1>,
    /// <doc:Behaviour#C4>, <doc:Behaviour#G1>).
    public var integration: String?

    /// Creates a baseline; the default is empty.
    public init(snapshot: SegmentSnapshot? = nil, linkedCustomers: Set<CustomerIds> = []) {
        self.snapshot = snapshot
        self.linkedCustomers = linkedCustomers
    }

    /// Creates a baseline that belongs to `integration` (see ``integration``).
    public init(snapshot: SegmentSnapshot?, linkedCustomers: Set<CustomerIds>, integration: String?) {
        self.init(snapshot: snapshot, linkedCustomers: linkedCustomers)
        self.integration = integration
    }

    /// No snapshot and no link memory.
    public static let empty = SegmentBaseline()
}
