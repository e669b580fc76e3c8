import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// What the event queue does with whatever a crash or damage left in its journal (see Behaviour P2, E4).
@Suite(Hang.timeLimit(minutes: 2)) struct EventJournalRecoveryTests {
    static let fileName = "event-queue.journal"

    /// A journal holding `events`, written by the store itself.
    private func journal(with events: [TrackedEvent], in dir: TemporaryDirectory) throws -> Data {
        let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
        for event in events { try store.append(event) }
        return try #require(dir.contents(of: Self.fileName))
    }

    @Test func p2_missingJournalIsAnEmptyQueue() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            #expect(store.load().isEmpty)
            #expect(log.lines.isEmpty)
            #expect(dir.entries() == [Self.fileName], "an empty journal is created")
        }
    }

    @Test func e4_tornLastRecordIsSkippedAndLaterAppendsAreSound() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let valid = try journal(with: events, in: dir)
            // A crash in the middle of appending a fourth item.
            var torn = valid
            torn.append(Data(#"{"event":{"customerIds":{"cookie":"x"},"failedAtt"#.utf8))
            try dir.write(torn, to: Self.fileName)

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            #expect(store.load() == events)
            #expect(log.problems.count == 1)
            #expect(log.problems.first?.hasPrefix("Tracking: ") == true)
            #expect(dir.contents(of: Self.fileName) == valid, "the torn tail is cut off")

            let next = Fixtures.event(3)
            try store.append(next)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == events + [next])
        }
    }

    @Test func e4_journalTruncatedMidRecordKeepsEveryCompleteItem() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(10)
            let valid = try journal(with: events, in: dir)
            try dir.write(valid.prefix(valid.count - 40), to: Self.fileName)
            let loaded = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
            #expect(loaded == Array(events.prefix(9)))
        }
    }

    @Test func p2_unreadableRecordIsSkippedLoggedAndTheJournalRebuilt() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(4)
            let valid = try journal(with: events, in: dir)
            var lines = valid.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
            lines[2] = Data([0x00, 0xFF, 0x13, 0x7B])  // the second item's line, damaged
            lines.insert(Data(#"{"op":"append","event":{"id":"not-a-uuid"}}"#.utf8), at: 3)
            let damaged = Data(lines.joined(separator: [UInt8(ascii: "\n")]))
            try dir.write(damaged, to: Self.fileName)

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            let expected = [events[0], events[2], events[3]]
            #expect(store.load() == expected)
            let line = try #require(log.problems.first)
            #expect(log.problems.count == 1)
            #expect(line.contains("Skipped 2 unreadable records"))
            #expect(line.contains("\(Self.fileName).corrupt-1"))
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged)

            let reopenLog = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: reopenLog).load() == expected)
            #expect(reopenLog.lines.isEmpty, "the rewritten journal is clean")
        }
    }

    /// A single unreadable line is enough for the rebuild: the rewritten journal holds the
    /// readable items only, and the damaged one is kept aside.
    @Test func p2_aSingleUnreadableRecordAlsoRebuildsTheJournal() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let valid = try journal(with: events, in: dir)
            var lines = valid.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
            let garbage = Data("not a record".utf8)
            lines.insert(garbage, at: 2)
            let damaged = Data(lines.joined(separator: [UInt8(ascii: "\n")]))
            try dir.write(damaged, to: Self.fileName)

            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == events)
            #expect(log.problems.count == 1)
            #expect(log.problems.first?.contains("Skipped 1 unreadable records") == true)
            let rewritten = try #require(dir.contents(of: Self.fileName))
            #expect(rewritten.range(of: garbage) == nil)
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged)
        }
    }

    /// The rebuild leaves exactly one descriptor open on the journal (the rewritten file, for
    /// appending): the store does not open it a second time after a successful rebuild.
    @Test(.enabled(if: OpenDescriptors.available))
    func p2_aRebuiltJournalIsOpenOnce() throws {
        try TemporaryDirectory.with { dir in
            let valid = try journal(with: Fixtures.events(3), in: dir)
            var lines = valid.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
            lines.insert(Data("not a record".utf8), at: 2)
            try dir.write(Data(lines.joined(separator: [UInt8(ascii: "\n")])), to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load().count == 3)
            #expect(OpenDescriptors.count(under: dir.root) == 1)
        }
    }

    /// Opening a journal that is mostly dead lines (left by a process that died before it could
    /// compact) compacts it at once.
    @Test func e4_aJournalOfMostlyDeadLinesIsCompactedWhenOpened() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(1_100)
            try FileEventQueueStoreTests.writeJournal(events, in: dir)
            let valid = try #require(dir.contents(of: Self.fileName))
            // 600 removal lines appended by hand, as a process would that died before compacting.
            var dead = valid
            for event in events.prefix(600) {
                dead.append(Data(#"{"op":"remove","id":"\#(event.id.uuidString)"}"#.utf8))
                dead.append(UInt8(ascii: "\n"))
            }
            try dir.write(dead, to: Self.fileName)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == Array(events.suffix(500)))
            let opened = try #require(dir.contents(of: Self.fileName))
            #expect(opened.count < valid.count / 2)  // 500 live lines, no dead ones
        }
    }

    @Test(arguments: Damage.allCases)
    func p2_damagedJournalHeaderIsLoggedSetAsideAndRebuilt(damage: Damage) throws {
        try TemporaryDirectory.with { dir in
            let valid = try journal(with: Fixtures.events(3), in: dir)
            // Damage the header line only (truncation included): the records after it cannot be
            // trusted without knowing their format.
            let header = valid.prefix { $0 != UInt8(ascii: "\n") }
            let damagedHeader = damage.apply(to: Data(header))
            let damaged = damage == .truncated ? damagedHeader : damagedHeader + valid.dropFirst(header.count)
            try dir.write(damaged, to: Self.fileName)

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            #expect(store.load().isEmpty)
            let line = try #require(log.problems.first)
            #expect(log.problems.count == 1)
            #expect(line.hasPrefix("Tracking: "))
            #expect(line.contains("set aside as \(Self.fileName).corrupt-1"))
            #expect(!line.contains(Fixtures.cookie))
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged)

            let next = Fixtures.event(42)
            try store.append(next)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [next])
        }
    }

    @Test func p2_otherJSONFileInPlaceOfTheJournalIsSetAside() throws {
        try TemporaryDirectory.with { dir in
            try dir.write("{\"format\":\"something-else\",\"version\":1}\n", to: Self.fileName)
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load().isEmpty)
            #expect(log.problems.count == 1)
            #expect(dir.entries().contains("\(Self.fileName).corrupt-1"))
        }
    }

    @Test func p1_strayTemporaryFileFromAnInterruptedCompactionIsIgnored() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            _ = try journal(with: events, in: dir)
            try dir.write("{\"format\":\"event-queue-journal\",\"version\":1}\n{\"op\":\"app", to: ".\(Self.fileName).tmp-CRASHED")
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == events)
            #expect(dir.entries() == [Self.fileName])
            #expect(log.lines.isEmpty)
        }
    }
}
