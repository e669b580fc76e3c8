import Foundation
import SegmentsDomain

/// The first line of the event journal: `{"format":"event-queue-journal","version":1}`.
struct JournalHeader: VersionedRecord {
    static let currentVersion = 1
    /// Names the file's kind, so another JSON file renamed into place is not mistaken for a queue.
    static let formatName = "event-queue-journal"

    /// The format version of the header and of every line after it.
    var version: Int
    /// Always ``formatName``.
    var format: String

    /// The header this SDK writes.
    static let current = JournalHeader(version: currentVersion, format: formatName)
}

/// Every line after the header: one change to the queue, e.g.
/// `{"op":"append","event":{…}}`, `{"op":"update","event":{…}}` or `{"op":"remove","id":"…"}`.
struct JournalEntry: Encodable {
    /// What the line does.
    enum Operation: String, Encodable {
        /// Adds `event` at the end (replacing an item with the same id).
        case append
        /// Replaces the queued item with `event`'s id, in place.
        case update
        /// Removes the item `id`.
        case remove
    }

    var op: Operation
    var event: EventRecord?
    var id: UUID?

    private init(op: Operation, event: EventRecord?, id: UUID?) {
        self.op = op
        self.event = event
        self.id = id
    }

    /// The line in `json`; throws when it is not a journal entry.
    init(json: JSONValue) throws(StoredFileProblem) {
        guard case .object(let fields) = json, case .string(let name)? = fields["op"],
            let op = Operation(rawValue: name)
        else { throw .wrongShape }
        self.op = op
        self.event = try fields["event"].map { json throws(StoredFileProblem) in try EventRecord(json: json) }
        if case .string(let text)? = fields["id"] {
            guard let id = UUID(uuidString: text) else { throw .wrongShape }
            self.id = id
        } else {
            self.id = nil
        }
    }

    /// A line adding `event`.
    static func append(_ event: TrackedEvent) -> JournalEntry {
        JournalEntry(op: .append, event: EventRecord(event), id: nil)
    }

    /// A line replacing the stored copy of `event`.
    static func update(_ event: TrackedEvent) -> JournalEntry {
        JournalEntry(op: .update, event: EventRecord(event), id: nil)
    }

    /// A line removing `id`.
    static func remove(_ id: TrackedEvent.ID) -> JournalEntry {
        JournalEntry(op: .remove, event: nil, id: id)
    }

    /// The line's bytes, newline included, written by ``JournalLineWriter`` (strings escape
    /// newlines, so a record is always exactly one line).
    func line() throws -> Data {
        try JournalLineWriter.line(for: self)
    }

    /// Applies the line to `events`; throws when the line lacks what its operation needs.
    func apply(to events: inout QueuedEvents) throws(StoredFileProblem) {
        switch op {
        case .append:
            guard let event else { throw .wrongShape }
            events.append(try event.trackedEvent())
        case .update:
            guard let event else { throw .wrongShape }
            events.update(try event.trackedEvent())
        case .remove:
            guard let id else { throw .wrongShape }
            events.remove(id: id)
        }
    }
}

/// The queue rebuilt from the journal's bytes, and what was wrong with them.
struct JournalReplay {
    static let newline = UInt8(ascii: "\n")

    /// The queue the complete, readable lines describe.
    var events = QueuedEvents()
    /// Lines after the header, readable or not: with `events.count`, how much of the file is dead.
    var recordLines = 0
    /// Complete lines that could not be decoded or applied; they are skipped.
    var unreadableLines = 0
    /// Bytes up to and including the last newline: the file's sound length.
    var completeLength = 0
    /// Whether bytes follow the last newline: an append interrupted by a crash, never acknowledged.
    var hasTornTail = false

    /// Replays `data`; throws when the header is missing, damaged or of an unknown version,
    /// since then no line can be trusted.
    static func replay(_ data: Data) throws(DecodeFailure) -> JournalReplay {
        var replay = JournalReplay()
        let lines = lineRanges(in: data)
        replay.completeLength = lines.last?.upperBound ?? 0
        replay.hasTornTail = replay.completeLength < data.count
        guard let headerRange = lines.first else {
            throw DecodeFailure(problem: data.isEmpty ? .empty : .notJSON, detail: nil)
        }
        let header = try VersionedJSON.decode(JournalHeader.self, from: data.subdata(in: headerRange.dropLast(1)))
        guard header.format == JournalHeader.formatName else { throw DecodeFailure(problem: .wrongShape, detail: nil) }

        for range in lines.dropFirst() {
            replay.recordLines += 1
            do {
                let entry = try JournalEntry(json: JSONReader.value(from: data.subdata(in: range.dropLast(1))))
                try entry.apply(to: &replay.events)
            } catch {
                replay.unreadableLines += 1
            }
        }
        return replay
    }

    /// The byte ranges of the newline-terminated lines, newline included.
    private static func lineRanges(in data: Data) -> [Range<Int>] {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var ranges: [Range<Int>] = []
            var start = 0
            for (index, byte) in bytes.enumerated() where byte == newline {
                ranges.append(start..<(index + 1))
                start = index + 1
            }
            return ranges
        }
    }
}
