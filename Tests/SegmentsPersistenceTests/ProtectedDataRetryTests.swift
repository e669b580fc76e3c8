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

/// More of `ProtectedDataTests`, on its helpers: what the customer, baseline and event-queue stores
/// keep in memory while protected data is unavailable, and what their retry does with it (see
/// Behaviour P8), on the paths the suite's main file does not reach — a save made while the file's load was refused, saves refused after a load, a
/// retry refused again or failing on a full disk, an update of an item kept in memory, an append
/// once the file opens before the retry ran — and the read cache after a failed save (R1). Written to kill
/// the survivors of the mutation run at HEAD (Docs/Mutation.json); each was seen failing with its
/// mutant applied.
extension ProtectedDataTests {
    /// Runs `body` while every `write` under `dir` fails with `ENOSPC`: a full disk.
    func full<Result>(_ dir: TemporaryDirectory, _ body: () throws -> Result) rethrows -> Result {
        try FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC, times: .max)], under: dir.root.path, body)
    }

    /// The baseline a fresh store (another process) reads from disk.
    func baselineOnDisk(_ dir: TemporaryDirectory) -> SegmentBaseline {
        FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load()
    }

    @Test func p8_aBaselineSavedWhileItsLoadWasRefusedIsAnsweredFromMemoryAndWrittenOnceByTheRetry() throws {
        try TemporaryDirectory.with { dir in
            let store = baselineStore(dir)
            #expect(refused(dir) { store.load() } == .empty)

            try refused(dir) { try store.save(Fixtures.baseline) }

            #expect(store.load() == Fixtures.baseline, "memory answers the baseline saved meanwhile")
            #expect(store.retryAfterProtectedData(), "no file: read as missing, then the saved baseline written")
            #expect(baselineOnDisk(dir) == Fixtures.baseline)
            #expect(!store.retryAfterProtectedData(), "written once: nothing is left to write")
        }
    }

    @Test func p8_baselineSavesRefusedAfterALoadAreWrittenByTheRetryOverTheStoredOne() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let store = baselineStore(dir)
            #expect(store.load() == Fixtures.baseline)  // read before protected data went away

            try refused(dir) {
                try store.save(.empty)
                try store.save(.empty)  // a second refused save must not forget the file was read
            }

            #expect(store.retryAfterProtectedData(), "the file was read before: the newest baseline is written")
            #expect(baselineOnDisk(dir) == .empty)
        }
    }

    @Test func p8_aBaselineRetryRefusedAgainReportsNothingWrittenAndWritesLater() throws {
        try TemporaryDirectory.with { dir in
            let store = baselineStore(dir)
            #expect(refused(dir) { store.load() } == .empty)
            try refused(dir) { try store.save(Fixtures.baseline) }

            #expect(!refused(dir) { store.retryAfterProtectedData() }, "still refused: nothing read, nothing written")
            #expect(baselineOnDisk(dir) == .empty)
            #expect(store.retryAfterProtectedData())
            #expect(baselineOnDisk(dir) == Fixtures.baseline)
        }
    }

    @Test func p8_aBaselineRetryOnAFullDiskIsLoggedAndKeptForTheNextRetry() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let store = baselineStore(dir, log: log)
            try refused(dir) { try store.save(Fixtures.baseline) }

            #expect(!full(dir) { store.retryAfterProtectedData() })
            #expect(log.problems.contains { $0.contains("Could not save the segment baseline") }, "logged: \(log.lines)")
            #expect(store.retryAfterProtectedData(), "kept in memory: the next retry writes it")
            #expect(baselineOnDisk(dir) == Fixtures.baseline)
        }
    }

    @Test func p8_aCustomerRetryOnAFullDiskIsLoggedAndKeptForTheNextRetry() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let store = customerStore(dir, log: log)
            #expect(store.load() == nil)  // read: no file yet
            try refused(dir) { try store.save(Fixtures.identified) }

            #expect(full(dir) { store.retryAfterProtectedData() } == .nothingNew)
            #expect(log.problems.contains { $0.contains("Could not save the customer ids") }, "logged: \(log.lines)")
            #expect(store.retryAfterProtectedData() == .saved, "kept in memory: the next retry writes it")
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.identified)
        }
    }

    @Test func r1_afterASaveThatFailedAndDeletedTheFileTheBaselineStoreDoesNotReadItAgain() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())  // not loaded yet

            #expect(throws: SegmentsError.self) { try full(dir) { try store.save(.empty) } }
            #expect(!dir.entries().contains("segment-baseline.json"), "the previous file was deleted")

            let read = FileOperationLog.counting(under: dir.root.path) { store.load() }
            #expect(read.result == .empty)
            #expect(read.counts.opens == 0, "the store knows the file is gone")
        }
    }

    // MARK: - The event queue's items kept in memory

    /// The items a fresh store (another process) reads from disk.
    func eventsOnDisk(_ dir: TemporaryDirectory) -> [TrackedEvent] {
        FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
    }

    @Test func p8_anUpdateOfAnItemKeptInMemoryChangesThatItemOnly() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(2)
            let store = eventStore(dir)
            var retried = events[1]
            retried.failedAttempts = 3
            try refused(dir) {
                #expect(store.load().isEmpty)
                try store.append(events[0])
                try store.append(events[1])
                try store.update(retried)  // an upload of it failed before the unlock
            }

            #expect(store.retryAfterProtectedData()?.map(\.id) == events.map(\.id))
            let stored = eventsOnDisk(dir)
            #expect(stored.map(\.id) == events.map(\.id))
            #expect(stored.map(\.failedAttempts) == [events[0].failedAttempts, 3])
        }
    }

    @Test func p8_itemsKeptInMemoryAreWrittenBeforeTheNextAppendOnceTheFileOpens() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let store = eventStore(dir)
            try refused(dir) {
                #expect(store.load().isEmpty)
                try store.append(events[0])
                try store.append(events[1])
            }

            try store.append(events[2])  // protected data is back, before the retry ran

            #expect(eventsOnDisk(dir).map(\.id) == events.map(\.id), "in the order they were tracked")
        }
    }

    @Test func p8_anEventQueueRetryOnAFullDiskIsLoggedAndKeepsTheItemsForTheNextRetry() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let events = Fixtures.events(2)
            let store = eventStore(dir, log: log)
            try refused(dir) {
                #expect(store.load().isEmpty)
                try store.append(events[0])
                try store.append(events[1])
            }

            #expect(full(dir) { store.retryAfterProtectedData() } == nil)
            #expect(log.problems.contains { $0.contains("Could not write the event queue") }, "logged: \(log.lines)")
            #expect(eventsOnDisk(dir).isEmpty)

            #expect(store.retryAfterProtectedData()?.map(\.id) == events.map(\.id), "kept in memory: the next retry writes them")
            #expect(eventsOnDisk(dir).map(\.id) == events.map(\.id))
        }
    }
}
