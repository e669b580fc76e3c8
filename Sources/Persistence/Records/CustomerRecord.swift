import SegmentsDomain

/// The customer file, format version 1: `{"version":1,"customerIds":{"cookie":"…",…}}`.
///
/// A record type of its own, not the Domain's `Codable`, so changing a Domain type can never
/// silently change what is on disk.
struct CustomerRecord: VersionedRecord, Hashable {
    static let currentVersion = 1

    /// The format version.
    var version: Int
    /// The customer's ids, `cookie` included.
    var customerIds: [String: String]

    /// The record of `customer`.
    init(_ customer: CustomerIds) {
        self.version = Self.currentVersion
        self.customerIds = customer.values
    }

    /// The stored customer.
    var customer: CustomerIds { CustomerIds(customerIds) }
}
