import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// The hand-written journal line (see Behaviour R2: the caller's one write) reads back exactly as the
/// `JSONEncoder` line it replaced.
@Suite(Hang.timeLimit(minutes: 2)) struct JournalLineWriterTests {
    static let tricky: [String: JSONValue] = [
        "quote\"back\\slash": .string("line\nbreak\ttab\r\u{01}\u{1f} é 😀 /"),
        "numbers": .array([.int(0), .int(-7), .int(Int.max), .double(9.99), .double(-0.5), .double(1e-7), .double(1e300), .double(5)]),
        "nested": .object(["a": .object(["b": .array([.null, .bool(true), .bool(false)])])]),
        "": .string(""),
    ]

    /// The header line written by hand (by compaction and by a store's first append) is the
    /// encoder's, so a reader recognises a later header by its bytes.
    @Test func r1_theWrittenHeaderLineIsTheEncodersHeader() throws {
        var encoded = try VersionedJSON.encode(JournalHeader.current)
        encoded.append(JournalReplay.newline)
        #expect(JournalHeader.line == encoded)
    }

    @Test(arguments: [
        TrackedEvent(kind: .event(type: "view \"item\""), customerIds: CustomerIds(["cookie": "c", "registered": "j\\n"]),
            properties: tricky, timestamp: Date(timeIntervalSinceReferenceDate: 722_000_000.123_456), failedAttempts: 3),
        TrackedEvent(kind: .customerUpdate, customerIds: CustomerIds(cookie: "c"), properties: [:],
            timestamp: Date(timeIntervalSinceReferenceDate: 5)),
    ])
    func r2_theHandWrittenLineReadsBackAsTheEncodersLine(_ event: TrackedEvent) throws {
        for entry in [JournalEntry.append(event), .update(event), .remove(event.id)] {
            let handWritten = try entry.line()
            var encoded = try JSONEncoder().encode(entry)
            encoded.append(JournalReplay.newline)
            #expect(handWritten.last == JournalReplay.newline)
            #expect(handWritten.dropLast().firstIndex(of: JournalReplay.newline) == nil, "one line")
            let fromHand = try JSONReader.value(from: Data(handWritten.dropLast()))
            let fromEncoder = try JSONReader.value(from: Data(encoded.dropLast()))
            #expect(fromHand == fromEncoder)
        }
        // Replayed, the item is the one the encoder's line gave (a whole `.double` reads back as
        // `.int` either way: the reader's rule).
        var fromHand = QueuedEvents(), fromEncoder = QueuedEvents()
        try JournalEntry(line: Data(try JournalEntry.append(event).line().dropLast())).apply(to: &fromHand)
        try JournalEntry(line: JSONEncoder().encode(JournalEntry.append(event))).apply(to: &fromEncoder)
        #expect(fromHand.ordered == fromEncoder.ordered)
        #expect(fromHand.ordered.map(\.timestamp) == [event.timestamp])
    }

    /// An item as read back from a journal line: its properties held as their text.
    private static func readBack(_ event: TrackedEvent) throws -> TrackedEvent {
        var queue = QueuedEvents()
        try JournalEntry(line: try JournalEntry.append(event).line()).apply(to: &queue)
        return try #require(queue.ordered.first)
    }

    /// The store's append writes its line from the item itself (no `EventRecord`): the very bytes
    /// of the entry's line, for events, customer updates and properties held as text.
    @Test(arguments: [
        TrackedEvent(kind: .event(type: "view \"item\""), customerIds: CustomerIds(["cookie": "c", "registered": "j\\n"]),
            properties: tricky, timestamp: Date(timeIntervalSinceReferenceDate: 722_000_000.123_456), failedAttempts: 3),
        TrackedEvent(kind: .customerUpdate, customerIds: CustomerIds(cookie: "c"), properties: ["email": "a@b.c"],
            timestamp: Date(timeIntervalSinceReferenceDate: -5.5)),
    ])
    func r2_theStoresAppendLineIsTheEntrysLineByteForByte(_ event: TrackedEvent) throws {
        for item in [event, try Self.readBack(event)] {
            #expect(try JournalLineWriter.appendLine(for: item) == JournalEntry.append(item).line())
        }
    }

    /// Numbers and ids are written without making strings, as Swift prints them: whole numbers
    /// as `String(_:)`, fractions as `description` (the shortest text that reads back exactly),
    /// ids as `uuidString`.
    @Test func r2_numbersAndIdsAreWrittenAsSwiftPrintsThem() throws {
        let whole = [0, 7, -1, -10, 1_000_000, Int.max, Int.min]
        let fractions = [9.99, -0.0, 0.1, 1e-7, 1e21, -2.5e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 722_000_000.123_456]
        for number in whole {
            let event = TrackedEvent(kind: .customerUpdate, customerIds: CustomerIds(cookie: "c"), properties: ["n": .int(number)],
                timestamp: Date(timeIntervalSinceReferenceDate: 0), failedAttempts: abs(number % 1000))
            let line = String(decoding: try JournalLineWriter.appendLine(for: event), as: UTF8.self)
            #expect(line.contains(#""n":\#(String(number))}"#), "\(line)")
            #expect(line.contains(#""failedAttempts":\#(String(abs(number % 1000)))}"#))
            #expect(line.contains(#"{"id":"\#(event.id.uuidString)""#))
        }
        for number in fractions {
            let event = TrackedEvent(kind: .customerUpdate, customerIds: CustomerIds(cookie: "c"), properties: ["n": .double(number)],
                timestamp: Date(timeIntervalSinceReferenceDate: number == .greatestFiniteMagnitude ? 0 : number))
            let line = String(decoding: try JournalLineWriter.appendLine(for: event), as: UTF8.self)
            #expect(line.contains(#""n":\#(number.description)}"#), "\(line)")
            if number != .greatestFiniteMagnitude {
                #expect(line.contains(#""timestamp":\#(number.description),"#), "\(line)")
            }
        }
    }

    @Test func p4_aNonFiniteNumberIsRefusedWithoutQuotingTheValue() {
        let event = TrackedEvent(
            kind: .event(type: "x"), customerIds: CustomerIds(cookie: "c"), properties: ["secret": .double(.nan)],
            timestamp: Date())
        let error = #expect(throws: SegmentsError.self) { try JournalEntry.append(event).line() }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("secret") == false)
    }
}
