import Foundation
import SegmentsDomain

/// One tracked item as the event journal stores it:
/// `{"id":"…","kind":"event","eventType":"purchase","customerIds":{…},"properties":{…},"timestamp":…,"failedAttempts":0}`.
///
/// `kind` is `event` (with `eventType`) or `customerUpdate`. `timestamp` is seconds since
/// 2001-01-01 UTC, which round-trips a `Date` exactly.
struct EventRecord: Codable {
    /// The item's kind on disk.
    enum Kind: String, Codable {
        case event
        case customerUpdate
    }

    var id: UUID
    var kind: Kind
    var eventType: String?
    var customerIds: [String: String]
    var properties: [String: JSONValue]
    var timestamp: Double
    var failedAttempts: Int

    /// The record of `event`.
    init(_ event: TrackedEvent) {
        self.id = event.id
        switch event.kind {
        case .event(let type):
            self.kind = .event
            self.eventType = type
        case .customerUpdate:
            self.kind = .customerUpdate
            self.eventType = nil
        }
        self.customerIds = event.customerIds.values
        self.properties = event.properties
        self.timestamp = event.timestamp.timeIntervalSinceReferenceDate
        self.failedAttempts = event.failedAttempts
    }

    /// The stored item; throws when an event has no type.
    func trackedEvent() throws(StoredFileProblem) -> TrackedEvent {
        let eventKind: TrackedEvent.Kind
        switch kind {
        case .event:
            guard let eventType else { throw .wrongShape }
            eventKind = .event(type: eventType)
        case .customerUpdate:
            eventKind = .customerUpdate
        }
        return TrackedEvent(
            id: id, kind: eventKind, customerIds: CustomerIds(customerIds), properties: properties,
            timestamp: Date(timeIntervalSinceReferenceDate: timestamp), failedAttempts: failedAttempts
        )
    }
}
