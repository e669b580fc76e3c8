import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The event queue's recovery and bookkeeping on the paths the other suites did not reach: the full
/// open a change before the load runs (`EventJournal.open`), a repair that is not published, the
/// read of a load that fails once, and what the store's sizes and flags decide after a load or a
/// failed compaction (Behaviour P2, E4, A3, R1, P8). Written to kill the survivors of the mutation
/// run of Sources/Persistence; each test was seen failing with its mutant applied.
@Suite(Hang.timeLimit(minutes: 1)) struct MutationSurvivorTests {
    static let fileName = "event-queue.journal"
    static let torn = Data(#"{"torn-marker"#.utf8)

    /// A journal of `events`, synced, written by a store of its own; returns its bytes.
    @discardableResult
    static func writeJournal(_ events: [TrackedEvent], in dir: TemporaryDirectory) throws -> Data {
        let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
        for event in events { try writer.append(event) }
        try writer.sync()
        return try #require(dir.contents(of: fileName))
    }

    /// A journal of `stored` with an unreadable line between its records.
    static func writeJournalWithAnUnreadableLine(_ stored: [TrackedEvent], in dir: TemporaryDirectory) throws -> Data {
        let valid = try writeJournal(stored, in: dir)
        let lines = valid.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var damaged = Data()
        for (index, line) in lines.dropLast().enumerated() {
            damaged += line + Data("\n".utf8)
            if index == 1 { damaged += Data(String(repeating: "not a record ", count: 40).utf8) + Data("\n".utf8) }
        }
        try dir.write(damaged, to: fileName)
        return damaged
    }

    /// The files set aside in the storage directory.
    static func asideCopies(_ dir: TemporaryDirectory) -> [String] {
        dir.entries().filter { $0.hasPrefix(fileName + ".corrupt-") }
    }

    /// How many times `needle` occurs in `data`.
    static func occurrences(of needle: Data, in data: Data) -> Int {
        var count = 0
        var from = data.startIndex
        while let range = data.range(of: needle, in: from..<data.endIndex) {
            count += 1
            from = range.upperBound
        }
        return count
    }

    /// The lines of `data` (each ended by a newline).
    static func lineCount(_ data: Data) -> Int {
        data.filter { $0 == UInt8(ascii: "\n") }.count
    }

    // MARK: - EventJournal.open, reached by a change before the load

    @Test func p2_aChangeBeforeTheLoadDeletesTheTemporaryFilesACrashLeft() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            try Self.writeJournal(stored, in: dir)
            let stray = "." + Self.fileName + ".tmp-" + UUID().uuidString
            try dir.write("half a rewrite", to: stray)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.remove(id: stored[0].id)

            #expect(!dir.entries().contains(stray), "\(dir.entries())")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [stored[1]])
        }
    }

    @Test func p2_e4_aTornLastLineIsCutBeforeAChangeBeforeTheLoadWritesItsLine() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let valid = try Self.writeJournal(stored, in: dir)
            try dir.write(valid + Self.torn, to: Self.fileName)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.remove(id: stored[0].id)

            let after = try #require(dir.contents(of: Self.fileName))
            #expect(after.range(of: Self.torn) == nil, "the torn line is cut, not glued to the removal's line")
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == [stored[1]], "the removal is kept")
            #expect(next.problems.isEmpty, "\(next.problems)")
        }
    }

    @Test func p2_aFailedRewriteOfAClosedTornLineBeforeTheLoadIsLogged() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            let valid = try Self.writeJournal(Array(stored.prefix(2)), in: dir)
            try dir.write(valid + Self.torn, to: Self.fileName)
            // Another run's first append ends the torn line with its newline and a header.
            let other = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try other.append(stored[2])
            try other.sync()

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            // The rewrite that drops the closed torn line fails once: the disk is full.
            try FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC)], under: dir.root.path) {
                try store.remove(id: UUID())
            }

            #expect(log.problems.contains { $0.contains("Compacting the event queue failed") && $0.contains("retry") }, "\(log.problems)")
            #expect(store.load() == stored, "the queue is still read whole")
        }
    }

    @Test func a3_anErasureBeforeTheLoadCompactsAJournalThatIsMostlyDead() throws {
        try TemporaryDirectory.with { dir in
            let kept = Fixtures.event(0)
            // The same item appended again and again: one live line, 599 dead ones.
            let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for _ in 0..<600 { try writer.append(kept) }
            try writer.sync()
            #expect(Self.lineCount(try #require(dir.contents(of: Self.fileName))) == 601)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.erase(ids: [Fixtures.event(1).id])

            let after = try #require(dir.contents(of: Self.fileName))
            #expect(Self.lineCount(after) == 2, "the header and the one live item")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [kept])
        }
    }

    // MARK: - EventJournal.prepareRepair

    @Test func p2_aRepairThatCannotBePublishedLeavesOneCopyOfAnUnusableHeaderAside() throws {
        try TemporaryDirectory.with { dir in
            let damaged = Data("not a journal\n".utf8)
            try dir.write(damaged, to: Self.fileName)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            // The rename of the repaired queue over the journal fails once: the full open follows.
            let loaded = FileOperationLog.failing([InjectedFileFault(.rename, errno: EIO)], under: dir.file(Self.fileName).path) {
                store.load()
            }

            #expect(loaded.isEmpty)
            let aside = Self.asideCopies(dir)
            #expect(aside.count == 1, "the discarded repair's copy went: \(aside)")
            #expect(aside.first.flatMap { dir.contents(of: $0) } == damaged)
        }
    }

    @Test func p2_e4_aRepairThatCannotBePublishedLeavesOneCopyOfTheBytesBeforeALaterHeaderAside() throws {
        try TemporaryDirectory.with { dir in
            let damaged = Data("not a journal\n".utf8)
            try dir.write(damaged, to: Self.fileName)
            let appended = Fixtures.event(0)
            // A later run's first append wrote a header after the damage.
            let other = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try other.append(appended)
            try other.sync()

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let loaded = FileOperationLog.failing([InjectedFileFault(.rename, errno: EIO)], under: dir.file(Self.fileName).path) {
                store.load()
            }

            #expect(loaded == [appended])
            let aside = Self.asideCopies(dir)
            #expect(aside.count == 1, "the discarded repair's copy went: \(aside)")
            #expect(aside.first.flatMap { dir.contents(of: $0) } == damaged, "the bytes before the later header")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [appended])
        }
    }

    @Test func p2_aLoadWhoseFirstReadFailsSetsNothingAsideFromAnIntactQueue() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            let valid = try Self.writeJournal(stored, in: dir)

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            // The load's read fails once; read again, the file is sound.
            let loaded = FileOperationLog.failing([InjectedFileFault(.read, errno: EIO)], under: dir.root.path) {
                store.load()
            }

            #expect(loaded == stored)
            #expect(Self.asideCopies(dir).isEmpty, "\(dir.entries())")
            #expect(!log.problems.contains { $0.contains("unreadable") }, "\(log.problems)")
            #expect(dir.contents(of: Self.fileName) == valid)
        }
    }

    // MARK: - EventJournal.publishRepair

    @Test func p2_e4_aFailedAppendAfterARepairLeavesTheRepairedFileAsItWas() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            _ = try Self.writeJournalWithAnUnreadableLine(stored, in: dir)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == stored)
            let repaired = try #require(dir.contents(of: Self.fileName))

            FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC)], under: dir.root.path) {
                #expect(throws: SegmentsError.self) { try store.append(Fixtures.event(7)) }
            }

            #expect(dir.contents(of: Self.fileName) == repaired, "cut back to the repaired file's length, no more, no less")
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.isEmpty, "\(next.problems)")
        }
    }

    /// Runs `store.load()` while `meanwhile` runs once on the load's thread, outside the store's
    /// lock, as the repair of a damaged journal sets it aside (its first `kind` call: a `link` for a
    /// second name, a `rename` for a copy): what another thread's calls could do at that moment.
    static func loadWhileRepairing(
        _ store: FileEventQueueStore, in dir: TemporaryDirectory, at kind: FileOperationKind,
        meanwhile: @escaping @Sendable () -> Void
    ) -> [TrackedEvent] {
        let first = Locked(true)
        let loaded = FileOperationLog.intercepting(
            kind, under: dir.root.path,
            { _ in
                guard first.withLock({ was in defer { was = false }; return was }) else { return }
                meanwhile()
            }
        ) { store.load() }
        #expect(!first.value, "the repair set the damage aside")
        return loaded
    }

    /// An append that fails on a full disk: nothing written, the journal closed.
    static func failedAppend(_ event: TrackedEvent, to store: FileEventQueueStore, in dir: TemporaryDirectory) {
        FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC)], under: dir.root.path) {
            #expect(throws: SegmentsError.self) { try store.append(event) }
        }
    }

    @Test func r1_e4_aRepairWhoseJournalWasReopenedMeanwhileIsRedoneIntoOneCleanFile() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            _ = try Self.writeJournalWithAnUnreadableLine(stored, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let before = Fixtures.event(10)
            let during = Fixtures.event(11)
            try store.append(before)

            // While the repair is prepared, an append fails (the journal is closed) and the next one
            // re-opens it without reading it, starting its line with a newline and a header.
            let loaded = Self.loadWhileRepairing(store, in: dir, at: .rename) {
                Self.failedAppend(Fixtures.event(12), to: store, in: dir)
                #expect(throws: Never.self) { try store.append(during) }
            }

            #expect(loaded == stored + [before, during])
            let file = try #require(dir.contents(of: Self.fileName))
            #expect(Self.occurrences(of: JournalHeader.line, in: file) == 1, "a clean file: one header, no dead lines")
            #expect(Self.lineCount(file) == 1 + loaded.count)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == loaded)
        }
    }

    // MARK: - FileEventQueueStore

    @Test func p2_e4_aFailedAppendAfterALoadThatCutATornLineLeavesTheFileAsItWas() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let valid = try Self.writeJournal(stored, in: dir)
            try dir.write(valid + Self.torn, to: Self.fileName)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == stored)
            #expect(dir.contents(of: Self.fileName) == valid, "the torn line is cut")

            Self.failedAppend(Fixtures.event(7), to: store, in: dir)

            #expect(dir.contents(of: Self.fileName) == valid, "cut back to the sound length, no more, no less")
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.isEmpty, "\(next.problems)")
        }
    }

    @Test func r1_anAppendAfterTheLoadOfAnIntactQueueWritesItsLineAlone() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let valid = try Self.writeJournal(stored, in: dir)

            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == stored)
            let added = Fixtures.event(5)
            try store.append(added)

            let file = try #require(dir.contents(of: Self.fileName))
            #expect(file.prefix(valid.count) == valid)
            #expect(Self.lineCount(file) == Self.lineCount(valid) + 1, "one line, no newline and header before it")
            #expect(Self.occurrences(of: JournalHeader.line, in: file) == 1)
        }
    }

    @Test func r1_aLoadAfterARepairedLoadReadsNothing() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            _ = try Self.writeJournalWithAnUnreadableLine(stored, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == stored)

            let (again, counts) = FileOperationLog.counting(under: dir.root.path) { store.load() }

            #expect(again == stored)
            #expect(counts.opens == 0 && counts.reads == 0 && counts.listings == 0, "the queue is known: \(counts)")
        }
    }

    @Test func p2_r1_aRepairWhoseJournalWasClosedMeanwhileLeavesNoSecondNameOfTheJournal() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            _ = try Self.writeJournalWithAnUnreadableLine(stored, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())

            // While the repair is prepared, an append fails: the journal is closed, the repair is
            // undone and the full open runs instead.
            let loaded = Self.loadWhileRepairing(store, in: dir, at: .link) {
                Self.failedAppend(Fixtures.event(12), to: store, in: dir)
            }

            #expect(loaded == stored)
            #expect(Self.asideCopies(dir).count == 1, "\(dir.entries())")
            #expect(!dir.entries().contains { $0.contains(".tmp-") }, "\(dir.entries())")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == stored)
        }
    }

    @Test func p8_aRetryWithNothingKeptInMemoryWritesAndSyncsNothing() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            try Self.writeJournal(stored, in: dir)
            let store = FileEventQueueStore(
                directory: dir.storage, logger: LineLog(), capacity: 100, protectedData: ManualProtectedDataAvailability(isAvailable: true))
            #expect(store.load() == stored)

            let (answer, counts) = FileOperationLog.counting(under: dir.root.path) { store.retryAfterProtectedData() }

            #expect(answer == nil)
            #expect(counts == FileOperationCounts(), "\(counts)")
        }
    }

    @Test func a3_e4_anErasureAfterAFailedAppendReopensTheQueue() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            try Self.writeJournal(stored, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == stored)
            Self.failedAppend(Fixtures.event(7), to: store, in: dir)

            #expect(throws: Never.self) { try store.erase(ids: [stored[0].id]) }

            #expect(store.load() == Array(stored.dropFirst()))
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == Array(stored.dropFirst()))
        }
    }

    @Test func a3_anErasureOfEveryItemDeletesTheFileAfterACompactionFailed() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load().isEmpty)
            // The same item appended again and again: one live line, 599 dead ones.
            let kept = Fixtures.event(0)
            for _ in 0..<600 { try store.append(kept) }
            // The compaction a change starts fails: the disk is full.
            try FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC)], under: dir.root.path) {
                try store.remove(id: UUID())
            }
            #expect(Self.lineCount(try #require(dir.contents(of: Self.fileName))) == 601, "not compacted")

            try store.erase(ids: [kept.id])

            #expect(!dir.entries().contains(Self.fileName), "nothing is left: the file is deleted (\(dir.entries()))")
        }
    }

    @Test func p7_e4_anItemAppendedBeforeTheLoadIsStillQueuedWhenTheFileIsSetAsideAsUntrusted() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let appended = Fixtures.event(0)
            try store.append(appended)
            // A second name of the journal, planted meanwhile: the full open refuses the file.
            try FileManager.default.linkItem(at: dir.file(Self.fileName), to: dir.root.appendingPathComponent("second-name"))

            try store.remove(id: UUID())

            #expect(Self.asideCopies(dir).count == 1, "\(dir.entries())")
            #expect(store.load() == [appended], "written again to the clean journal, and known")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [appended])
        }
    }

    // MARK: - JournalReplay: an unreadable line right before a later header

    @Test func p2_e4_anOverlongTornLineThatALaterFirstAppendEndedIsDroppedNotSetAside() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let valid = try Self.writeJournal(stored, in: dir)
            // A crash left a last line longer than any line the reader decodes, without its newline.
            let overlong = Data(repeating: UInt8(ascii: "x"), count: JournalReplay.maximumLineLength + 1)
            try dir.write(valid + overlong, to: Self.fileName)
            // Another run's first append ends it with its newline and a header.
            let appended = Fixtures.event(2)
            let other = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try other.append(appended)
            try other.sync()

            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == stored + [appended])

            #expect(Self.asideCopies(dir).isEmpty, "a torn line is not damage: \(dir.entries())")
            #expect(log.problems.contains { $0.contains("incomplete last record") }, "\(log.problems)")
            #expect(!log.problems.contains { $0.contains("unreadable") }, "\(log.problems)")
        }
    }

    @Test func p2_e4_anUnreadableLineBeforeAReadableTornLineIsStillDamageSetAside() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let valid = try Self.writeJournal([events[0]], in: dir)
            // An unreadable line, then a line whose newline a crash did not write: it is readable,
            // and a later first append's newline and header end it.
            let junk = Data("not a record\n".utf8)
            let torn = try JournalEntry.append(events[1]).line().dropLast()
            try dir.write(valid + junk + torn, to: Self.fileName)
            let other = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try other.append(events[2])
            try other.sync()
            let found = try #require(dir.contents(of: Self.fileName))

            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == events)

            let aside = Self.asideCopies(dir)
            #expect(aside.count == 1, "the unreadable line is damage, not a torn line: \(dir.entries())")
            #expect(aside.first.flatMap { dir.contents(of: $0) } == found)
            #expect(log.problems.contains { $0.contains("Skipped 1 unreadable records") }, "\(log.problems)")
        }
    }

    // MARK: - QueuedEvents

    @Test func e3_removingAnItemSaysWhetherItWasQueued() {
        let events = Fixtures.events(2)
        var queue = QueuedEvents(events)

        let removed = queue.remove(id: events[0].id)
        let removedAgain = queue.remove(id: events[0].id)
        let removedUnknown = queue.remove(id: UUID())

        #expect(removed)
        #expect(!removedAgain, "already removed")
        #expect(!removedUnknown, "never queued")
        #expect(queue.ordered == [events[1]])
    }
}
