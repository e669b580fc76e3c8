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

/// Recovery from a damaged event queue when the repair itself fails (faults injected through the
/// ``FileOperationLog`` test seam): the queue still starts, says what happened, and loses nothing
/// it held (see Behaviour P2, E4).
@Suite(Hang.timeLimit(minutes: 1)) struct JournalRecoveryFaultTests {
    static let fileName = "event-queue.journal"
    static let torn = Data(#"{"torn-marker"#.utf8)

    /// A journal of `events`, synced, written by a store of its own.
    static func writeJournal(_ events: [TrackedEvent], in dir: TemporaryDirectory) throws {
        let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
        for event in events { try writer.append(event) }
        try writer.sync()
    }

    @Test func p2_aTornLastLineThatCannotBeCutIsDroppedByARewriteAtOnce() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            try Self.writeJournal(stored, in: dir)
            let valid = try #require(dir.contents(of: Self.fileName))
            try dir.write(valid + Self.torn, to: Self.fileName)

            let log = LineLog(level: .warning)
            let loaded = FileOperationLog.failing([InjectedFileFault(.truncate, errno: EIO)], under: dir.root.path) {
                FileEventQueueStore(directory: dir.storage, logger: log).load()
            }

            #expect(loaded == stored)
            #expect(log.problems.contains { $0.contains("incomplete last record") })
            let after = try #require(dir.contents(of: Self.fileName))
            #expect(after.range(of: Self.torn) == nil, "the torn line is gone from the file")
            #expect(after.last == UInt8(ascii: "\n"))
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.isEmpty, "\(next.problems)")
        }
    }

    @Test func p2_aDamagedQueueThatCannotBeRewrittenIsLoggedAsAnErrorAndKeptAside() throws {
        try TemporaryDirectory.with { dir in
            let damaged = Data("not a journal\n".utf8)
            try dir.write(damaged, to: Self.fileName)

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            // The disk stays full: the repair beside appends fails, and so does the full open after it.
            let loaded = FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC, times: .max)], under: dir.root.path) {
                store.load()
            }

            #expect(loaded.isEmpty)
            #expect(log.problems.contains { $0.contains("Could not open the event queue") && $0.contains("write") })
            let aside = dir.entries().filter { $0.hasPrefix(Self.fileName + ".corrupt-") }
            #expect(aside.count == 1)
            #expect(aside.first.flatMap { dir.contents(of: $0) } == damaged, "the damaged bytes are kept")
        }
    }

    @Test func p2_aDamagedQueueThatCannotBeSetAsideIsReportedAsDeletedNotAsSetAside() throws {
        try TemporaryDirectory.with { dir in
            try dir.write("not a journal\n", to: Self.fileName)

            let log = LineLog(level: .warning)
            let loaded = FileOperationLog.failing([InjectedFileFault(.rename, errno: EACCES)], under: dir.root.path) {
                FileEventQueueStore(directory: dir.storage, logger: log).load()
            }

            #expect(loaded.isEmpty)
            #expect(dir.entries().allSatisfy { !$0.contains("corrupt") }, "\(dir.entries())")
            #expect(log.problems.contains { $0.contains("unusable") && $0.contains("deleted") }, "\(log.problems)")
            #expect(!log.problems.contains { $0.contains("set aside as") }, "\(log.problems)")
        }
    }

    @Test func p2_aSymbolicLinkSetAsideIsReplacedByAnEmptyQueueAtOnce() throws {
        try TemporaryDirectory.with { dir in
            let target = dir.root.appendingPathComponent("elsewhere")
            try Data("keep me\n".utf8).write(to: target)
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: dir.file(Self.fileName), withDestinationURL: target)

            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().isEmpty)

            let type = try FileManager.default.attributesOfItem(atPath: dir.file(Self.fileName).path)[.type]
            #expect(type as? FileAttributeType == .typeRegular, "a clean journal replaces the link right away")
            #expect(dir.contents(of: Self.fileName) == JournalHeader.line)
            #expect(try Data(contentsOf: target) == Data("keep me\n".utf8))
        }
    }

    @Test func e4_anItemRemovedAfterARecoveredLoadStaysRemovedWhenAFailedWriteReopensTheQueue() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            try dir.write("not a journal\n", to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.append(events[0])
            #expect(store.load() == [events[0]])
            try store.remove(id: events[0].id)

            FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC)], under: dir.root.path) {
                #expect(throws: SegmentsError.self) { try store.append(events[1]) }
            }
            try store.append(events[2])
            try store.sync()

            #expect(store.load() == [events[2]])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [events[2]])
        }
    }

    /// A journal of `stored` with an unreadable line between its records.
    static func writeJournalWithAnUnreadableLine(_ stored: [TrackedEvent], in dir: TemporaryDirectory) throws -> Data {
        try writeJournal(stored, in: dir)
        let valid = try #require(dir.contents(of: fileName))
        let lines = valid.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var damaged = Data()
        for (index, line) in lines.dropLast().enumerated() {
            damaged += line + Data("\n".utf8)
            if index == 1 { damaged += Data("not a record\n".utf8) }
        }
        try dir.write(damaged, to: fileName)
        return damaged
    }

    @Test func p2_unreadableRecordsWhoseCopyCannotBeKeptAreStillSkippedAndTheQueueRewritten() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            _ = try Self.writeJournalWithAnUnreadableLine(stored, in: dir)

            let log = LineLog(level: .warning)
            let loaded = FileOperationLog.failing([InjectedFileFault(.link, errno: EPERM)], under: dir.root.path) {
                FileEventQueueStore(directory: dir.storage, logger: log).load()
            }

            #expect(loaded == stored)
            #expect(log.problems.contains { $0.contains("no copy could be kept") }, "\(log.problems)")
            #expect(dir.entries().allSatisfy { !$0.contains("corrupt") }, "\(dir.entries())")
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.isEmpty, "the rewritten queue is sound: \(next.problems)")
        }
    }

    @Test func p2_unreadableRecordsWhoseRewriteFailsStayInTheFileAndAreSkippedAgainLater() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let damaged = try Self.writeJournalWithAnUnreadableLine(stored, in: dir)

            let log = LineLog(level: .warning)
            // The disk stays full: the repair beside appends fails, and so does the full open after it.
            let loaded = FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC, times: .max)], under: dir.root.path) {
                FileEventQueueStore(directory: dir.storage, logger: log).load()
            }

            #expect(loaded == stored)
            #expect(log.problems.contains { $0.contains("rewriting it failed") }, "\(log.problems)")
            #expect(dir.contents(of: Self.fileName) == damaged, "the damaged file stays in use, nothing lost")
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.contains { $0.contains("and the queue was rewritten") }, "\(next.problems)")
        }
    }
}
