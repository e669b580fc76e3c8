import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

@Suite(Hang.timeLimit(minutes: 2)) struct FileEventQueueStoreTests {
    static let fileName = "event-queue.journal"

    @Test func e1_appendedItemsLoadOldestFirst() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load().isEmpty)
            let events = Fixtures.events(5)
            for event in events { try store.append(event) }
            #expect(store.load() == events)
        }
    }

    @Test func e4_restartFindsTheWholeQueueInOrder() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(20)
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in events { try store.append(event) }
                try store.remove(id: events[0].id)
                try store.remove(id: events[7].id)
                var retried = events[3]
                retried.failedAttempts = 4
                try store.update(retried)
            }
            var expected = events
            expected[3].failedAttempts = 4
            expected.remove(at: 7)
            expected.remove(at: 0)
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == expected)
            #expect(log.lines.isEmpty)
        }
    }

    @Test func e3_updateReplacesInPlaceAndRemoveDeletes() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let events = Fixtures.events(3)
            for event in events { try store.append(event) }
            var failed = events[0]
            failed.failedAttempts = 1
            try store.update(failed)
            #expect(store.load() == [failed, events[1], events[2]], "an update keeps the item's place")
            try store.remove(id: events[1].id)
            #expect(store.load() == [failed, events[2]])
        }
    }

    @Test func e3_unknownIdsAreNoOpsAndWriteNothing() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let events = Fixtures.events(2)
            for event in events { try store.append(event) }
            try store.remove(id: events[0].id)
            let sizeBefore = dir.contents(of: Self.fileName)?.count

            try store.remove(id: UUID())
            try store.remove(id: events[0].id)
            try store.update(events[0])
            try store.update(Fixtures.event(99))
            #expect(store.load() == [events[1]], "a removed item is never brought back by an update")
            #expect(dir.contents(of: Self.fileName)?.count == sizeBefore)
        }
    }

    @Test func e1_appendingAQueuedIdAgainMovesItToTheEnd() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let events = Fixtures.events(3)
            for event in events { try store.append(event) }
            try store.append(events[0])
            #expect(store.load() == [events[1], events[2], events[0]])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [events[1], events[2], events[0]])
        }
    }

    @Test func p1_journalIsOwnerOnlyAndStartsWithAVersionedHeader() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.append(Fixtures.event(1))
            #expect(try TemporaryDirectory.permissions(of: dir.file(Self.fileName)) == 0o600)
            #expect(try TemporaryDirectory.permissions(of: dir.storage) == 0o700)
            let lines = try #require(dir.text(of: Self.fileName)).split(separator: "\n")
            #expect(lines.first == #"{"format":"event-queue-journal","version":1}"#)
            #expect(lines.count == 2, "one line per append; properties with newlines stay on one line")
            #expect(dir.entries() == [Self.fileName])
        }
    }

    @Test func e4_appendDoesNotRewriteTheQueue() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in Fixtures.events(50) { try store.append(event) }
            let before = try #require(dir.contents(of: Self.fileName))
            try store.append(Fixtures.event(50))
            let after = try #require(dir.contents(of: Self.fileName))
            #expect(after.prefix(before.count) == before, "earlier bytes are untouched: the new line is appended")
            #expect(after.count > before.count)
        }
    }

    @Test func e4_tenThousandQueuedItemsLoadCorrectly() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(10_000)
            // Written in one go, as a compaction writes it: 10,000 synced appends would only make
            // the suite slow, and appends are covered above.
            var state = JournalState(events: QueuedEvents(events))
            let journal = EventJournal(
                directory: StorageDirectory(url: dir.storage),
                diagnostics: StoreDiagnostics(logger: LineLog(), prefix: "Tracking:", subject: "event queue", fallback: ""))
            try StorageDirectory(url: dir.storage).create()
            try journal.compact(&state)
            journal.close(&state)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let loaded = store.load()
            #expect(loaded.count == 10_000)
            #expect(loaded == events)
            let next = Fixtures.event(10_000)
            try store.append(next)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == events + [next])
        }
    }

    @Test func e4_compactionKeepsTheQueueAndShrinksTheFile() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let events = Fixtures.events(1_200)
            for event in events { try store.append(event) }
            let fullSize = try #require(dir.contents(of: Self.fileName)?.count)
            // Draining oldest first, as uploads do, makes most lines dead and triggers compaction.
            for event in events.prefix(1_100) { try store.remove(id: event.id) }
            let compactedSize = try #require(dir.contents(of: Self.fileName)?.count)
            #expect(compactedSize < fullSize / 2)
            #expect(store.load() == Array(events.suffix(100)))
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == Array(events.suffix(100)))
            #expect(dir.entries() == [Self.fileName])
        }
    }

    /// A journal holding `events`, written in one go as a compaction writes it: thousands of synced
    /// appends would hold one of the few cooperative threads for seconds, starving the live
    /// timers of loopback suites running in parallel.
    static func writeJournal(_ events: [TrackedEvent], in dir: TemporaryDirectory) throws {
        var state = JournalState(events: QueuedEvents(events))
        let journal = EventJournal(
            directory: StorageDirectory(url: dir.storage),
            diagnostics: StoreDiagnostics(logger: LineLog(), prefix: "Tracking:", subject: "event queue", fallback: ""))
        try StorageDirectory(url: dir.storage).create()
        try journal.compact(&state)
        journal.close(&state)
    }

    /// A compaction replaces the file and re-opens it: the old descriptor must be closed, or
    /// every compaction leaks one. Closing the store releases the last one.
    @Test(.enabled(if: OpenDescriptors.available))
    func e4_aCompactionAndClosingTheStoreReleaseEveryDescriptor() throws {
        try TemporaryDirectory.with { dir in
            do {
                let events = Fixtures.events(600)
                try Self.writeJournal(events, in: dir)
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                #expect(store.load() == events)
                #expect(OpenDescriptors.count(under: dir.root) == 1)  // the journal, open for appending
                let before = try #require(dir.contents(of: Self.fileName)?.count)
                // Draining oldest first: each removal kills two lines (the item's and its own), so
                // after 256 removals the dead lines reach 512 and outnumber the live ones: the file
                // is compacted and re-opened.
                for event in events.prefix(300) { try store.remove(id: event.id) }
                let after = try #require(dir.contents(of: Self.fileName)?.count)
                #expect(after < before * 3 / 4)  // it did compact
                #expect(OpenDescriptors.count(under: dir.root) == 1)
            }
            #expect(OpenDescriptors.count(under: dir.root) == 0)  // deinit closed it
        }
    }

    /// After a compaction the dead-line count starts again from zero: the next removal appends
    /// one short line instead of rewriting the file again (the rewrite stays amortised O(1)).
    @Test func e4_aCompactionResetsTheDeadLineCount() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(600)
            try Self.writeJournal(events, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == events)
            // Each removal kills two lines (the item's and its own): the file is rewritten once
            // the dead lines reach 512 and outnumber the live ones, the first time it shrinks.
            var size = try #require(dir.contents(of: Self.fileName)?.count)
            var compactedAfter: Int?
            for (index, event) in events.prefix(400).enumerated() {
                try store.remove(id: event.id)
                let now = try #require(dir.contents(of: Self.fileName)?.count)
                defer { size = now }
                if now < size {
                    compactedAfter = index
                    break
                }
            }
            let index = try #require(compactedAfter)
            let compacted = try #require(dir.contents(of: Self.fileName)?.count)
            try store.remove(id: events[index + 1].id)
            let next = try #require(dir.contents(of: Self.fileName)?.count)
            #expect(next > compacted)  // appended, not rewritten
            #expect(next - compacted < 100)
        }
    }

    /// The threshold: 512 dead lines that are at least as many as the live ones compact the file,
    /// 510 do not. 768 items, each removal killing two lines: the 256th removal compacts.
    @Test func e4_compactionStartsAtFiveHundredTwelveDeadLines() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(768)
            try Self.writeJournal(events, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == events)
            for event in events.prefix(255) { try store.remove(id: event.id) }
            let before = try #require(dir.contents(of: Self.fileName)?.count)
            try store.remove(id: events[255].id)  // 512 dead lines, 512 live
            let after = try #require(dir.contents(of: Self.fileName)?.count)
            #expect(after < before * 3 / 4)  // rewritten with the 512 live items only
            #expect(store.load() == Array(events.suffix(512)))
        }
    }

    /// A storage folder that cannot be created is reported as an error, and the queue is empty.
    @Test func p2_aQueueThatCannotBeOpenedIsLoggedAsAnError() throws {
        try TemporaryDirectory.with { dir in
            let blocker = dir.root.appendingPathComponent("a-file")
            try Data("x".utf8).write(to: blocker)
            let log = LineLog()
            let store = FileEventQueueStore(directory: blocker.appendingPathComponent("storage"), logger: log)
            #expect(store.load().isEmpty)
            #expect(log.problems.contains { $0.hasPrefix("Tracking: Could not open the event queue") })
        }
    }

    @Test func e1_itemJSONCannotRepresentIsRefusedWithoutLeakingItsValue() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let first = Fixtures.event(1)
            try store.append(first)
            let bad = TrackedEvent(
                kind: .event(type: "x"), customerIds: Fixtures.identified,
                properties: ["secret-ratio": .double(.nan)], timestamp: Date(timeIntervalSinceReferenceDate: 0))
            let error = try #require(throws: SegmentsError.self) { try store.append(bad) }
            #expect(error.code == .storage)
            #expect(!error.description.contains("secret-ratio"))
            let second = Fixtures.event(2)
            try store.append(second)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [first, second])
        }
    }

    @Test func e4_concurrentAppendsAreAllKept() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let events = Fixtures.events(200)
            await withTaskGroup(of: Void.self) { group in
                for event in events {
                    group.addTask { try? store.append(event) }
                }
            }
            let stored = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
            #expect(Set(stored) == Set(events))
            #expect(stored == store.load(), "the file's order is the store's order")
        }
    }
}
