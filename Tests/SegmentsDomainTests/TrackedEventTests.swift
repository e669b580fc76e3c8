import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// A queued item (see Behaviour E1): equal only to the same item in the same state, whichever way
/// each holds its properties (values, or the JSON text read back from the queue's file, P7); hashed
/// by its fields, the id first; encoded with every field and decoded back to an equal item.
@Suite(Hang.timeLimit(minutes: 1)) struct TrackedEventTests {
    private static let id = UUID(uuidString: "6F9619FF-8B86-4D11-B42D-00C04FC964FF")!
    /// Not a whole number of seconds, and exact in binary, so a round trip is exact.
    private static let timestamp = Date(timeIntervalSinceReferenceDate: 812_345_678.25)

    private static func item(
        id: UUID = Self.id, properties: StoredProperties = .values(["sku": "A-1"]), timestamp: Date = Self.timestamp
    ) -> TrackedEvent {
        TrackedEvent(
            id: id, kind: .event(type: "purchase"), customerIds: CustomerIds(cookie: "c"), storedProperties: properties,
            timestamp: timestamp, failedAttempts: 2)
    }

    private static func text(_ json: String) -> StoredProperties { .text(Array(json.utf8)) }

    @Test func e1_anItemEqualsAnItemWithTheSameFieldsAndOnlyThat() {
        #expect(Self.item() == Self.item())
        #expect(Self.item(id: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!) != Self.item())
        #expect(Self.item(timestamp: Self.timestamp.addingTimeInterval(1)) != Self.item())
    }

    @Test func p7_itemsReadBackAsTextAreEqualOnlyWhenTheirValuesAre() {
        // The same text, text and the values it holds, and texts spelt differently for the same values.
        #expect(Self.item(properties: Self.text(#"{"sku":"A-1"}"#)) == Self.item(properties: Self.text(#"{"sku":"A-1"}"#)))
        #expect(Self.item(properties: Self.text(#"{"sku":"A-1"}"#)) == Self.item())
        #expect(Self.item(properties: Self.text(#"{"sku":"A-1"}"#)) == Self.item(properties: Self.text(#"{ "sku": "A-1" }"#)))
        // Different texts of different values.
        #expect(Self.item(properties: Self.text(#"{"sku":"A-1"}"#)) != Self.item(properties: Self.text(#"{"sku":"A-2"}"#)))
        #expect(Self.item(properties: Self.text(#"{"n":1}"#)) != Self.item(properties: Self.text(#"{"n":2,"m":3}"#)))
    }

    @Test func e1_equalItemsHashAlikeAndTheIdChangesTheHash() {
        #expect(Self.item().hashValue == Self.item(properties: Self.text(#"{"sku":"A-1"}"#)).hashValue)
        // 64 items that differ only in their ids: with the id hashed, two of them share a hash with
        // a chance of about 2⁻⁵³; without it, all 64 would.
        let hashes = Set((0..<64).map { _ in Self.item(id: UUID()).hashValue })
        #expect(hashes.count == 64)
    }

    @Test func e1_anItemEncodesEveryFieldItsTimestampIncludedAndDecodesToAnEqualItem() throws {
        let item = Self.item(properties: Self.text(#"{"sku":"A-1","n":[1,2.5,null]}"#))
        let data = try JSONEncoder().encode(item)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(Set((object ?? [:]).keys) == ["id", "kind", "customerIds", "properties", "timestamp", "failedAttempts"])
        #expect(object?["timestamp"] as? Double == Self.timestamp.timeIntervalSinceReferenceDate)
        let decoded = try JSONDecoder().decode(TrackedEvent.self, from: data)
        #expect(decoded == item)
        #expect(decoded.timestamp == Self.timestamp)
        #expect(decoded.properties == ["sku": "A-1", "n": [1, 2.5, nil]])
    }
}
