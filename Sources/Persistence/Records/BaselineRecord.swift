import Foundation
import SegmentsDomain

/// The segment baseline file, format version 1:
/// `{"version":1,"snapshot":{"customerIds":{…},"segments":{"discovery":[{"id":…}]},"fetchedAt":…},"linkedCustomers":[{…}],"integration":"…"}`.
///
/// `snapshot` is absent when there is none; `integration` (the digest of the integration the baseline
/// belongs to) is absent in files of earlier versions, which any integration adopts. `fetchedAt` is seconds since 2001-01-01 UTC (Foundation's
/// reference date), which round-trips a `Date` exactly. Segments keep their wire objects.
struct BaselineRecord: VersionedRecord {
    static let currentVersion = 1

    /// The stored snapshot.
    struct Snapshot: Codable {
        /// The customer the segments were fetched for.
        var customerIds: [String: String]
        /// The segments by category wire name.
        var segments: [String: [Segment]]
        /// When the fetch completed, in seconds since the reference date.
        var fetchedAt: Double
    }

    /// The format version.
    var version: Int
    /// The last successful fetch, if any.
    var snapshot: Snapshot?
    /// Customers whose ids were linked, sorted so equal baselines give equal files.
    var linkedCustomers: [[String: String]]
    /// The integration the baseline belongs to, if known.
    var integration: String?

    /// The record of `baseline`.
    init(_ baseline: SegmentBaseline) {
        self.version = Self.currentVersion
        self.snapshot = baseline.snapshot.map { snapshot in
            Snapshot(
                customerIds: snapshot.customer.values,
                segments: Dictionary(uniqueKeysWithValues: snapshot.segments.map { ($0.key.name, $0.value) }),
                fetchedAt: snapshot.fetchedAt.timeIntervalSinceReferenceDate
            )
        }
        self.linkedCustomers = baseline.linkedCustomers.sorted { $0.description < $1.description }.map(\.values)
        self.integration = baseline.integration
    }

    /// The accepted `fetchedAt` values, in seconds since the reference date: finite, between
    /// `Date.distantPast` and `Date.distantFuture` (<doc:Behaviour#P7>). A real file holds the time
    /// of a fetch, which the clock gave.
    static var fetchedAtRange: ClosedRange<Double> { ReplayableEvent.timestampRange }

    /// Whether `fetchedAt` is within ``fetchedAtRange``.
    var numbersAreInRange: Bool { snapshot.map { Self.fetchedAtRange.contains($0.fetchedAt) } ?? true }

    /// The stored baseline.
    var baseline: SegmentBaseline {
        SegmentBaseline(
            snapshot: snapshot.map { snapshot in
                SegmentSnapshot(
                    customer: CustomerIds(snapshot.customerIds),
                    segments: Dictionary(uniqueKeysWithValues: snapshot.segments.map { (SegmentCategory($0.key), $0.value) }),
                    fetchedAt: Date(timeIntervalSinceReferenceDate: snapshot.fetchedAt)
                )
            },
            linkedCustomers: Set(linkedCustomers.map(CustomerIds.init)),
            integration: integration
        )
    }
}
