import Foundation
import SegmentsDomain

/// One tracked item as the event journal stores it:
/// `{"id":"…","kind":"event","eventType":"purchase","customerIds":{…},"properties":{…},"timestamp":…,"failedAttempts":0}`.
///
/// `kind` is `event` (with `eventType`) or `customerUpdate`. `timestamp` is seconds since
/// 2001-01-01 UTC, which round-trips a `Date` exactly. Written by `JournalLineWriter` (the same JSON
/// `JSONEncoder` gives for this type), read with ``JSONReader``, which keeps `properties` as their
/// text (``JournalEntry/propertiesMember``).
struct EventRecord: Encodable {
    /// The item's kind on disk.
    enum Kind: String, Encodable {
        case event
        case customerUpdate
    }

    var id: UUID
    var kind: Kind
    var eventType: String?
    var customerIds: [String: String]
    var properties: StoredProperties
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
        self.properties = event.storedProperties
        self.timestamp = event.timestamp.timeIntervalSinceReferenceDate
        self.failedAttempts = event.failedAttempts
    }

    /// The stored attempt counts accepted (<doc:Behaviour#P7>): a count of failed uploads, never
    /// negative, and far below the point where adding one could overflow. The pipeline drops an
    /// item after 10 failures by default, so a real file holds 0–9; anything outside this range
    /// was not written by this SDK.
    static let failedAttemptsRange = 0...Int(Int32.max)

    /// The stored timestamps accepted, in seconds since 2001-01-01 UTC (<doc:Behaviour#P7>):
    /// finite and between `Date.distantPast` and `Date.distantFuture`, the range `trackEvent`
    /// accepts (``ReplayableEvent/timestampRange``).
    static var timestampRange: ClosedRange<Double> { ReplayableEvent.timestampRange }

    /// The record in `json`, the event object of a line without its properties, whose text is
    /// `propertiesText` (already checked by ``JournalEntry/propertiesMember``'s rules: nested at most 64
    /// levels, at most 64 KiB as ``ReplayableEvent`` counts); throws when a field is missing, of the
    /// wrong type, or a number out of its range (``failedAttemptsRange``, ``timestampRange``), or when
    /// the properties are not an object: such a line is unreadable (P2).
    init(json: JSONValue, propertiesText: UnsafeRawBufferPointer, interning: inout JournalInterning) throws(StoredFileProblem) {
        guard case .object(let fields) = json,
            case .string(let idText)? = fields["id"], let id = UUID(uuidString: idText),
            case .string(let kindName)? = fields["kind"], let kind = Kind(rawValue: kindName),
            case .object(let idValues)? = fields["customerIds"],
            propertiesText.first == UInt8(ascii: "{"),
            case .int(let failedAttempts)? = fields["failedAttempts"]
        else { throw .wrongShape }
        self.id = id
        self.kind = kind
        switch fields["eventType"] {
        case nil, .null?: self.eventType = nil
        case .string(let type)?: self.eventType = interning.eventType(type)
        default: throw .wrongShape
        }
        var customerIds: [String: String] = [:]
        for (key, value) in idValues {
            guard case .string(let text) = value else { throw .wrongShape }
            customerIds[key] = text
        }
        self.customerIds = interning.customerIds(customerIds)
        self.properties = .text(Array(propertiesText))
        switch fields["timestamp"] {
        case .double(let seconds)?: self.timestamp = seconds
        case .int(let seconds)?: self.timestamp = Double(seconds)
        default: throw .wrongShape
        }
        guard Self.timestampRange.contains(timestamp), Self.failedAttemptsRange.contains(failedAttempts) else {
            throw .wrongShape
        }
        self.failedAttempts = failedAttempts
    }

    /// The stored item; throws when an event has no type, or when properties held as values fail
    /// the check a new item passes before it is queued (``ReplayableEvent``: nested deeper than 64
    /// levels, over 64 KiB). Properties read from a line were checked by the same rules as they were
    /// read (``JournalEntry/propertiesMember``). Such a line was not written by this SDK, and
    /// uploading it could overflow a 512 KiB thread stack at every launch (<doc:Behaviour#E6>,
    /// <doc:Behaviour#P9>): it is unreadable, and the journal is set aside and rebuilt without it,
    /// with a warning.
    func trackedEvent() throws(StoredFileProblem) -> TrackedEvent {
        if case .values(let values) = properties {
            do {
                try ReplayableEvent.check(values)
            } catch {
                throw .wrongShape
            }
        }
        let eventKind: TrackedEvent.Kind
        switch kind {
        case .event:
            guard let eventType else { throw .wrongShape }
            eventKind = .event(type: eventType)
        case .customerUpdate:
            eventKind = .customerUpdate
        }
        return TrackedEvent(
            id: id, kind: eventKind, customerIds: CustomerIds(customerIds), storedProperties: properties,
            timestamp: Date(timeIntervalSinceReferenceDate: timestamp), failedAttempts: failedAttempts
        )
    }

    private enum CodingKeys: String, CodingKey {
        case id, kind, eventType, customerIds, properties, timestamp, failedAttempts
    }

    /// The JSON `JSONEncoder` gives for the record (the hand-written line's reference, see
    /// `JournalLineWriterTests`): the properties as an object.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(eventType, forKey: .eventType)
        try container.encode(customerIds, forKey: .customerIds)
        try container.encode(properties.values, forKey: .properties)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(failedAttempts, forKey: .failedAttempts)
    }
}
