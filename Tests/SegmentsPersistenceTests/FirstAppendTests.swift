import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour R1, R2, R3 for the first append of a store, in every state the file can be in: the
/// caller pays one buffered `write` (after a cheap open), never a read, a sync, a rename or a
/// truncation, and what it wrote survives the process being killed before ``FileEventQueueStore/load()``.
@Suite(Hang.timeLimit(minutes: 1)) struct FirstAppendTests {
    static let fileName = "event-queue.journal"

    /// The file calls `body` makes under `dir`.
    private func calls(in dir: TemporaryDirectory, _ body: () throws -> Void) rethrows -> FileOperationCounts {
        try FileOperationLog.counting(under: dir.root.path, body).counts
    }

    /// What the caller's thread may pay for an append: one write, nothing that reads, syncs, renames,
    /// cuts or lists.
    private func expectOneBufferedWrite(_ counts: FileOperationCounts, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(counts.writes == 1, "one write", sourceLocation: sourceLocation)
        #expect(counts.syncs == 0, "no fsync", sourceLocation: sourceLocation)
        #expect(counts.directorySyncs == 0, "no directory fsync", sourceLocation: sourceLocation)
        #expect(counts.renames == 0 && counts.links == 0, "no rename", sourceLocation: sourceLocation)
        #expect(counts.reads == 0 && counts.bytesRead == 0, "no read", sourceLocation: sourceLocation)
        #expect(counts.truncations == 0, "no truncation", sourceLocation: sourceLocation)
        #expect(counts.listings == 0, "no directory listing", sourceLocation: sourceLocation)
        #expect(counts.opens <= 1, "at most one open", sourceLocation: sourceLocation)
    }

    /// A journal holding `events`, written by a store that then went away.
    private func journal(with events: [TrackedEvent], in dir: TemporaryDirectory) throws -> Data {
        let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
        for event in events { try store.append(event) }
        try store.sync()
        return try #require(dir.contents(of: Self.fileName))
    }

    // MARK: - What the caller's thread pays

    @Test func r1_theFirstAppendOnAFreshInstallDoesNoFsyncOrRenameOnTheCallersThread() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let counts = try calls(in: dir) { try store.append(Fixtures.event(0)) }
            expectOneBufferedWrite(counts)
            #expect(counts.creations == 1, "the file is created by the append's open")
            #expect(dir.entries() == [Self.fileName])
        }
    }

    @Test func r1_theFirstAppendAfterATornLastLineDoesNotReadTheFile() throws {
        try TemporaryDirectory.with { dir in
            let valid = try journal(with: Fixtures.events(3), in: dir)
            try dir.write(valid + Data(#"{"op":"append","event":{"id":"#.utf8), to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let counts = try calls(in: dir) { try store.append(Fixtures.event(3)) }
            expectOneBufferedWrite(counts)
            #expect(dir.entries() == [Self.fileName], "nothing set aside by the append")
        }
    }

    @Test func r1_theFirstAppendToASoundQueueDoesNotReadTheFile() throws {
        try TemporaryDirectory.with { dir in
            let valid = try journal(with: Fixtures.events(3), in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let counts = try calls(in: dir) { try store.append(Fixtures.event(3)) }
            expectOneBufferedWrite(counts)
            #expect(dir.contents(of: Self.fileName)?.prefix(valid.count) == valid, "appended, not rewritten")
        }
    }

    /// A process killed between creating the file and writing to it leaves it empty.
    @Test func r1_theFirstAppendToAnEmptyFileWritesTheHeaderWithItsLine() throws {
        try TemporaryDirectory.with { dir in
            try dir.write(Data(), to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let event = Fixtures.event(0)
            let counts = try calls(in: dir) { try store.append(event) }
            expectOneBufferedWrite(counts)
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == [event])
            #expect(log.lines.isEmpty)
        }
    }

    @Test func r1_everyAppendBeforeTheLoadIsOneWrite() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in Fixtures.events(5) {
                expectOneBufferedWrite(try calls(in: dir) { try store.append(event) })
            }
        }
    }

    /// The directory entry of a file the append created is made durable by the next sync, on the
    /// storage queue; later syncs sync only the file.
    @Test func r2_theFirstSyncAfterTheAppendCreatedTheFileAlsoSyncsTheDirectory() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.append(Fixtures.event(0))
            let first = try calls(in: dir) { try store.sync() }
            #expect(first.syncs == 1)
            #expect(first.directorySyncs == 1)
            try store.append(Fixtures.event(1))
            let second = try calls(in: dir) { try store.sync() }
            #expect(second.syncs == 1)
            #expect(second.directorySyncs == 0)
        }
    }

    // MARK: - Killed before the load: a new instance reads the file

    @Test func r2_r3_appendsBeforeTheLoadOnAFreshInstallSurviveARestartInOrder() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(5)
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in events { try store.append(event) }
                // Killed: no load, no sync.
            }
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == events)
            #expect(log.lines.isEmpty)
        }
    }

    @Test func r2_r3_appendsBeforeTheLoadOfASoundQueueSurviveARestartWithoutAWarning() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            _ = try journal(with: stored, in: dir)
            let later = (3..<6).map { Fixtures.event($0) }
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in later { try store.append(event) }
            }
            let log = LineLog(level: .warning)
            let restarted = FileEventQueueStore(directory: dir.storage, logger: log)
            #expect(restarted.load() == stored + later)
            #expect(log.lines.isEmpty, "the lines a first append starts with are not damage")
            let next = Fixtures.event(6)
            try restarted.append(next)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == stored + later + [next])
            #expect(log.lines.isEmpty)
        }
    }

    @Test func r2_r3_p2_appendsAfterATornLastLineSurviveARestartInOrder() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            let valid = try journal(with: stored, in: dir)
            try dir.write(valid + Data(#"{"op":"append","event":{"customerIds":{"#.utf8), to: Self.fileName)
            let later = (3..<5).map { Fixtures.event($0) }
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in later { try store.append(event) }
                // Killed before its load.
            }
            let log = LineLog(level: .warning)
            let restarted = FileEventQueueStore(directory: dir.storage, logger: log)
            #expect(restarted.load() == stored + later)
            #expect(log.problems.count == 1)
            #expect(log.problems.first?.contains("incomplete last record") == true)
            #expect(dir.entries() == [Self.fileName], "a torn line is not damage: nothing set aside")

            let next = Fixtures.event(5)
            try restarted.append(next)
            let quiet = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: quiet).load() == stored + later + [next])
            #expect(quiet.lines.isEmpty, "the load rewrote the file without the torn line")
        }
    }

    /// In one process: the torn line the first append ended is dropped by the load's rewrite, so
    /// the next start finds a clean file.
    @Test func r3_p2_theLoadRewritesAwayATornLineThatTheFirstAppendEnded() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            let valid = try journal(with: stored, in: dir)
            try dir.write(valid + Data(#"{"op":"remove","id":"#.utf8), to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let later = Fixtures.event(3)
            try store.append(later)
            #expect(store.load() == stored + [later])
            let text = try #require(dir.text(of: Self.fileName))
            #expect(!text.contains(#"{"op":"remove""#), "the torn line is gone")
            let quiet = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: quiet).load() == stored + [later])
            #expect(quiet.lines.isEmpty)
        }
    }

    /// Loading first: a torn last line is cut, and the next append needs no newline or header.
    @Test func r3_p2_aLoadBeforeTheFirstAppendCutsATornLineAndTheAppendIsJustItsLine() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            let valid = try journal(with: stored, in: dir)
            try dir.write(valid + Data(#"{"op":"app"#.utf8), to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == stored)
            #expect(dir.contents(of: Self.fileName) == valid)
            let next = Fixtures.event(3)
            let counts = try calls(in: dir) { try store.append(next) }
            expectOneBufferedWrite(counts)
            #expect(dir.contents(of: Self.fileName) == valid + (try JournalEntry.append(next).line()))
        }
    }

    /// A power cut tore the header of a file just created; the next start appends before its
    /// load and is killed: the item must not be set aside with the damaged header.
    @Test(arguments: [#"{"format":"event-q"#, #"{"format":"event-queue-journal","version":99}"# + "\n"])
    func r2_p2_anAppendAfterAnUnusableHeaderSurvivesARestart(damaged: String) throws {
        try TemporaryDirectory.with { dir in
            try dir.write(damaged, to: Self.fileName)
            let event = Fixtures.event(0)
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                try store.append(event)
            }
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == [event])
            #expect(log.problems.count == 1)
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == Data(damaged.utf8), "the damaged bytes, as they were")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [event])
        }
    }

    /// Found by the fuzz target: an unusable first line, a later header, and damaged lines after
    /// it. The items after the later header that can be read are kept, and the file as it was
    /// found is set aside whole — the damage after the header is not dropped without a copy (P2).
    @Test func p2_damageAfterALaterHeaderIsSetAsideWithTheWholeFile() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let valid = try journal(with: stored, in: dir)
            let found = Data("\n".utf8) + valid + Data("{\"op\":\"anpend\"}\n".utf8)
            try dir.write(found, to: Self.fileName)
            let log = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == stored)
            #expect(!log.problems.isEmpty)
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == found, "the file as it was found")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == stored)
        }
    }

    /// The same in one process: the load finds the damage the appends were written after.
    @Test func r3_p2_theLoadKeepsAppendsMadeAfterUnreadableLinesAndSetsAsideOnlyTheOldBytes() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let valid = try journal(with: stored, in: dir)
            let damaged = valid + Data("not a record\n".utf8)
            try dir.write(damaged, to: Self.fileName)
            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            let later = (2..<4).map { Fixtures.event($0) }
            for event in later { try store.append(event) }
            #expect(store.load() == stored + later)
            #expect(log.problems.count == 1)
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged)
            let quiet = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: quiet).load() == stored + later)
            #expect(quiet.lines.isEmpty)
        }
    }
}
