#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// ``current`` as written, newline included: the bytes `VersionedJSON.encode` gives for it
    /// (sorted keys; `JournalLineWriterTests` checks they agree). Besides starting the file, it
    /// starts what a store instance appends before it has read the file (<doc:Behaviour#R1>), so a
    /// reader knows the lines after it are this format whatever came before.
    /// Made on each use, not kept in a global: a `Data` global's buffer is reported as leaked by
    /// LeakSanitizer (the fuzz runs), and the header is written rarely.
    static var line: Data { Data(#"{"format":"event-queue-journal","version":1}"#.utf8 + [JournalReplay.newline]) }
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

    /// Where an item's properties sit in a line, and the rules they are read by: kept as text,
    /// checked while read, never built (<doc:Behaviour#P7>, ``StoredProperties``). The limits are
    /// ``ReplayableEvent``'s, which every item passed before it was queued (<doc:Behaviour#E6>).
    static let propertiesMember = JSONReader.TextMember(
        path: ["event", "properties"], maximumLevels: ReplayableEvent.maximumDepth,
        maximumSize: ReplayableEvent.maximumEncodedSize)

    /// The entry in `line` (its newline may follow); throws when it is not a journal entry.
    init(line: Data) throws {
        var interning = JournalInterning()
        self = try line.withUnsafeBytes { try JournalEntry(line: $0, interning: &interning) }
    }

    /// The entry in `bytes`, one line without its newline; throws when it is not a journal entry.
    /// The event's properties are kept as their text (``propertiesMember``); customer ids and event
    /// types equal to those of earlier lines share their storage (`interning`).
    init(line bytes: UnsafeRawBufferPointer, interning: inout JournalInterning) throws {
        let (json, propertiesRange) = try JSONReader.value(from: bytes, keeping: Self.propertiesMember)
        guard case .object(let fields) = json, case .string(let name)? = fields["op"],
            let op = Operation(rawValue: name)
        else { throw StoredFileProblem.wrongShape }
        self.op = op
        self.event = try fields["event"].map { json throws(StoredFileProblem) in
            guard let propertiesRange else { throw .wrongShape }
            return try EventRecord(
                json: json, propertiesText: UnsafeRawBufferPointer(rebasing: bytes[propertiesRange]), interning: &interning)
        }
        if case .string(let text)? = fields["id"] {
            guard let id = UUID(uuidString: text) else { throw StoredFileProblem.wrongShape }
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
///
/// The file is a header line and then one line per change. Two more kinds of line are written
/// by a store's first append, which does not read the file before it writes (<doc:Behaviour#R1>):
/// it starts with a newline, ending whatever line a crash left unfinished, and a header line. So
/// after the first line, an empty line or a header line is dead and skipped, and an unreadable
/// line right before a header line is an append that a crash cut short, not damage.
struct JournalReplay {
    static let newline = UInt8(ascii: "\n")

    /// The longest line read, newline excluded: 256 KiB (<doc:Behaviour#P7>). The largest item the
    /// pipeline accepts has 64 KiB of properties (as ``ReplayableEvent`` counts them, which bounds
    /// what ``JournalLineWriter`` writes for them); the rest of the line is its envelope (about
    /// 200 bytes), its event type and its customer ids, which get the other 192 KiB. A longer line
    /// is skipped as unreadable without being decoded, and ``EventJournal`` never writes one.
    static let maximumLineLength = 256 << 10
    /// The longest first line decoded as a header: the header this SDK writes is 45 bytes.
    static let maximumHeaderLength = 1 << 10

    /// The queue the complete, readable lines describe.
    var events = QueuedEvents()
    /// Lines after the header, readable or not: with `events.count`, how much of the file is dead.
    var recordLines = 0
    /// Complete lines that could not be decoded or applied; they are skipped.
    var unreadableLines = 0
    /// Those of them longer than ``maximumLineLength``: skipped without being decoded.
    var overlongLines = 0
    /// Bytes up to and including the last newline: the file's sound length.
    var completeLength = 0
    /// Whether bytes follow the last newline: an append interrupted by a crash, never acknowledged.
    var hasTornTail = false
    /// Lines a crash left unfinished that a later first append ended with its newline: dead, not
    /// damage (the appends they belonged to never returned).
    var closedTornLines = 0
    /// Why the first line is not a usable header, when a later header line (a later store
    /// instance's first append) still let the lines after it be read; the bytes before it
    /// cannot be trusted and are skipped.
    var headerProblem: DecodeFailure?
    /// Where the first header line after the first line starts, if there is one.
    var laterHeaderOffset: Int?

    /// Replays `data`; throws when the header is missing, damaged or of an unknown version and
    /// no later header follows, since then no line can be trusted.
    ///
    /// The lines are walked in place, one at a time: nothing is kept per line, so junk (a file of
    /// newlines) costs no memory beyond the file's bytes, which the size cap bounds (<doc:Behaviour#P7>).
    /// Lines after an unusable header are not decoded, nor is a line longer than
    /// ``maximumLineLength``; the others are decoded into items that keep their properties as text,
    /// checked by the 64-level and 64 KiB rules as they are read, so a valid queue costs about its
    /// bytes on disk, not a tree many times their size (<doc:Behaviour#P7>). At most `capacity`
    /// items are decoded: an append line that would queue one more is unreadable (the pipeline
    /// never queues more, so such a file was not written by this SDK with this capacity), and the
    /// journal is rebuilt without it, a copy set aside (P2).
    static func replay(_ data: Data, capacity: Int = EventQueueLimits.defaultCapacity) throws(DecodeFailure) -> JournalReplay {
        var replay = JournalReplay()
        var headerFailure: DecodeFailure?
        var sawFirstLine = false
        // Whether the lines read now follow a usable header.
        var trusted = false
        // Whether the previous line was unreadable, so a header line right after it marks it as torn.
        var previousUnreadable = false
        let header = [UInt8](JournalHeader.line.dropLast())
        var interning = JournalInterning()
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var start = 0
            for index in 0..<bytes.count where bytes[index] == newline {
                let range = start..<index
                start = index + 1
                replay.completeLength = start
                if !sawFirstLine {
                    sawFirstLine = true
                    // A header is 45 bytes: a longer first line is not one, and is not decoded.
                    headerFailure =
                        range.count > maximumHeaderLength
                        ? DecodeFailure(problem: .wrongShape, detail: nil) : Self.headerFailure(in: data.subdata(in: range))
                    trusted = headerFailure == nil
                    continue
                }
                replay.recordLines += 1
                if range.isEmpty {
                    previousUnreadable = false
                    continue
                }
                if range.count == header.count, memcmp(bytes.baseAddress! + range.lowerBound, header, header.count) == 0 {
                    if previousUnreadable {
                        replay.unreadableLines -= 1
                        replay.closedTornLines += 1
                    }
                    if !trusted, replay.laterHeaderOffset == nil { replay.laterHeaderOffset = range.lowerBound }
                    trusted = true
                    previousUnreadable = false
                    continue
                }
                // Lines after an unusable header are set aside with it, not read.
                guard trusted else { continue }
                // Longer than any item the SDK writes: unreadable, and not decoded (a planted line
                // of millions of empty arrays would cost gigabytes as a tree).
                if range.count > maximumLineLength {
                    replay.unreadableLines += 1
                    replay.overlongLines += 1
                    previousUnreadable = true
                    continue
                }
                do {
                    let entry = try JournalEntry(line: UnsafeRawBufferPointer(rebasing: bytes[range]), interning: &interning)
                    if entry.op == .append, let event = entry.event, replay.events.count >= capacity,
                        !replay.events.contains(event.id)
                    {
                        throw StoredFileProblem.wrongShape
                    }
                    try entry.apply(to: &replay.events)
                    previousUnreadable = false
                } catch {
                    replay.unreadableLines += 1
                    previousUnreadable = true
                }
            }
            replay.hasTornTail = start < bytes.count
        }
        guard sawFirstLine else { throw DecodeFailure(problem: data.isEmpty ? .empty : .notJSON, detail: nil) }
        if let headerFailure {
            guard replay.laterHeaderOffset != nil else { throw headerFailure }
            replay.headerProblem = headerFailure
        }
        return replay
    }

    /// Why `line` is not a header of this format, or `nil` when it is one.
    private static func headerFailure(in line: Data) -> DecodeFailure? {
        do throws(DecodeFailure) {
            let header = try VersionedJSON.decode(JournalHeader.self, from: line)
            guard header.format == JournalHeader.formatName else { return DecodeFailure(problem: .wrongShape, detail: nil) }
            return nil
        } catch {
            return error
        }
    }
}

/// What the lines of one replay share: equal customer ids and equal event types are held once,
/// not once per item (a queue is mostly one customer's events of a few types, and a dictionary of
/// ids per item took more memory than its line).
struct JournalInterning {
    private var customerIds: [String: String]?
    private var eventTypes: Set<String> = []

    /// `ids`, or an equal dictionary seen before.
    mutating func customerIds(_ ids: [String: String]) -> [String: String] {
        if let last = customerIds, last == ids { return last }
        customerIds = ids
        return ids
    }

    /// `type`, or an equal string seen before.
    mutating func eventType(_ type: String) -> String {
        if let index = eventTypes.firstIndex(of: type) { return eventTypes[index] }
        eventTypes.insert(type)
        return type
    }
}
