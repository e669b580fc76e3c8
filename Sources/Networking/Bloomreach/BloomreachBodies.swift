import Foundation
import SegmentsDomain

/// The JSON bodies of the Bloomreach `POST` requests: link ids, event and customer update
/// (<doc:Behaviour#Requests>).
package enum BloomreachBodies {
    /// `{"external_ids": {…}}`: every id of the customer except `cookie`.
    static func linkIds(_ customer: CustomerIds) throws -> Data {
        try encode(LinkIds(externalIds: customer.hardIds))
    }

    /// `{"customer_ids": {…}, "properties": {…}, "timestamp": 1732249200.123, "event_type": "…"}`;
    /// a customer update has no `event_type`. The ids are those stamped on the item when tracked.
    package static func tracking(_ event: TrackedEvent) throws -> Data {
        let eventType: String?
        switch event.kind {
        case .event(let type): eventType = type
        case .customerUpdate: eventType = nil
        }
        let body = Tracking(
            customerIds: event.customerIds.values, properties: event.properties,
            timestamp: event.timestamp.timeIntervalSince1970, eventType: eventType)
        return try encode(body)
    }

    private struct LinkIds: Encodable {
        let externalIds: [String: String]

        enum CodingKeys: String, CodingKey {
            case externalIds = "external_ids"
        }
    }

    private struct Tracking: Encodable {
        let customerIds: [String: String]
        let properties: [String: JSONValue]
        let timestamp: Double
        let eventType: String?

        enum CodingKeys: String, CodingKey {
            case customerIds = "customer_ids"
            case properties
            case timestamp
            case eventType = "event_type"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(customerIds, forKey: .customerIds)
            try container.encode(properties, forKey: .properties)
            try container.encode(timestamp, forKey: .timestamp)
            try container.encodeIfPresent(eventType, forKey: .eventType)
        }
    }

    /// Sorted keys keep bodies byte-for-byte reproducible (signing middleware, tests).
    private static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try encoder.encode(value)
        } catch {
            // A non-finite number (NaN, infinity) has no JSON form: retrying cannot help.
            throw SegmentsError(
                .invalidConfiguration, "The request body cannot be encoded as JSON: \(error)", underlying: error)
        }
    }
}
