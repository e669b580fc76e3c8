import Foundation
import SegmentsDomain

/// Sample values, distinct enough that a mix-up shows.
enum Fixtures {
    static let cookie = "8f14e45f-ceea-467f-a0e6-secret-cookie"
    static let anonymous = CustomerIds(cookie: cookie)
    static let identified = CustomerIds(["cookie": cookie, "registered": "jane@example.com"])

    static let baseline = SegmentBaseline(
        snapshot: SegmentSnapshot(
            customer: identified,
            segments: [
                .discovery(): [
                    Segment(id: "s1", segmentationId: "g1", attributes: ["name": "VIP"]),
                    Segment(id: "s2", segmentationId: "g1"),
                ],
                SegmentCategory("future-category"): [Segment(id: "s3", segmentationId: "g9")],
                .content(): [],
            ],
            // A fractional, non-round time: the round trip must be exact.
            fetchedAt: Date(timeIntervalSinceReferenceDate: 786_543_210.123_456_7)
        ),
        linkedCustomers: [identified, CustomerIds(["cookie": "other", "registered": "x"])]
    )

    /// The `index`-th sample item: events and customer updates alternate every 7th.
    static func event(_ index: Int, failedAttempts: Int = 0) -> TrackedEvent {
        TrackedEvent(
            kind: index % 7 == 3 ? .customerUpdate : .event(type: "view_item"),
            customerIds: identified,
            properties: [
                "index": .int(index), "price": 9.99, "sku": .string("A-\(index)"), "tags": ["a", "b\n\"quoted\""],
                "gift": nil, "nested": ["ok": true],
            ],
            timestamp: Date(timeIntervalSinceReferenceDate: 786_000_000.25 + Double(index)),
            failedAttempts: failedAttempts
        )
    }

    /// `count` sample items.
    static func events(_ count: Int) -> [TrackedEvent] {
        (0..<count).map { event($0) }
    }
}
