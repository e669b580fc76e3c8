import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P7 rev 4 (issue 31, findings 2 and 6): a stored line longer than the largest valid
/// item is skipped without being decoded, and no line is written that the reader would skip. The
/// memory this saves is measured by `StoredFileMemoryTests` and benchmark 8 (8c, 8d).
@Suite(Hang.timeLimit(minutes: 2)) struct JournalLineLengthTests {
    static let name = EventJournal.fileName

    /// `line` (its newline dropped) with spaces before its closing brace, so it is `length` bytes
    /// long: the same entry, valid JSON, just longer than the SDK ever writes it.
    static func padded(_ line: Data, to length: Int) -> Data {
        var text = Data(line.dropLast(2))
        text.append(Data(repeating: UInt8(ascii: " "), count: length - line.count + 1))
        text.append(contentsOf: Array("}\n".utf8))
        return text
    }

    @Test func p7_aLineLongerThanTheLargestItemIsSkippedWithoutBeingDecoded() throws {
        let events = Fixtures.events(3)
        let long = Self.padded(try JournalEntry.append(events[1]).line(), to: JournalReplay.maximumLineLength + 1)
        #expect(long.count == JournalReplay.maximumLineLength + 2, "the line and its newline")
        #expect(try JournalEntry(line: long).event?.trackedEvent() == events[1], "a valid entry, only longer")
        var data = JournalHeader.line
        data.append(try JournalEntry.append(events[0]).line())
        data.append(long)
        data.append(try JournalEntry.append(events[2]).line())

        let replay = try JournalReplay.replay(data)
        #expect(replay.events.ordered == [events[0], events[2]])
        #expect(replay.unreadableLines == 1)
        #expect(replay.overlongLines == 1)

        try TemporaryDirectory.with { dir in
            try dir.write(data, to: Self.name)
            let log = LineLog()
            let loaded = FileEventQueueStore(directory: dir.storage, logger: log).load()
            #expect(loaded == [events[0], events[2]])
            #expect(dir.contents(of: Self.name + ".corrupt-1") == data, "the damaged file is kept aside as it was")
            #expect(log.problems.contains { $0.contains("Skipped 1 unreadable records") })
        }
    }

    @Test func p7_aLineAtTheLimitIsStillRead() throws {
        let event = Fixtures.event(1)
        let atLimit = Self.padded(try JournalEntry.append(event).line(), to: JournalReplay.maximumLineLength)
        var data = JournalHeader.line
        data.append(atLimit)
        let replay = try JournalReplay.replay(data)
        #expect(replay.events.ordered == [event])
        #expect(replay.unreadableLines == 0)
    }

    @Test func p7_aFirstLineLongerThanAHeaderIsNotDecodedAsOne() throws {
        var header = JournalHeader.line.dropLast()
        let padding = Data(repeating: UInt8(ascii: " "), count: JournalReplay.maximumHeaderLength)
        header.insert(contentsOf: padding, at: header.startIndex + 1)
        var data = Data(header)
        data.append(JournalReplay.newline)
        data.append(try JournalEntry.append(Fixtures.event(0)).line())
        #expect(throws: DecodeFailure.self, "a padded header is not taken for one") { try JournalReplay.replay(data) }
    }

    @Test func p7_e6_anItemWhoseLineWouldBeLongerThanTheReaderTakesIsRefusedWithStorage() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let (refusal, reloaded, kept) = try await onDedicatedThread {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                let kept = Fixtures.event(0)
                try store.append(kept)
                // Its properties pass the 64 KiB rule; its event type makes the line too long.
                let huge = TrackedEvent(
                    kind: .event(type: String(repeating: "t", count: JournalReplay.maximumLineLength)),
                    customerIds: Fixtures.identified, properties: ["n": 1], timestamp: Date(timeIntervalSinceReferenceDate: 1))
                var refusal: SegmentsError?
                do { try store.append(huge) } catch let error as SegmentsError { refusal = error }
                return (refusal, FileEventQueueStore(directory: dir.storage, logger: LineLog()).load(), kept)
            }
            #expect(refusal?.code == .storage)
            #expect(refusal?.message.contains("too large to queue") == true)
            #expect(reloaded == [kept], "nothing unreadable was written")
        }
    }

    @Test func p7_theLongestAppendTheWriterAcceptsIsReadBackAndItsUpdatesFit() throws {
        // An event type that brings the append line to its limit exactly.
        let base = try JournalEntry.append(Self.event(typeLength: 1)).line().count - 1
        let event = Self.event(typeLength: 1 + EventJournal.maximumAppendLineLength - base)
        let line = try JournalEntry.append(event).line()
        #expect(line.count - 1 == EventJournal.maximumAppendLineLength)
        var failed = event
        failed.failedAttempts = 1_000_000
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            _ = store.load()
            try store.append(event)
            try store.update(failed)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [failed])
        }
    }

    private static func event(typeLength: Int) -> TrackedEvent {
        TrackedEvent(
            id: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
            kind: .event(type: String(repeating: "t", count: typeLength)), customerIds: Fixtures.identified,
            properties: ["n": 1], timestamp: Date(timeIntervalSinceReferenceDate: 1))
    }
}
