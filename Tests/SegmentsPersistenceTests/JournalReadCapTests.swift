import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P7 and E6 (issue 23, findings 2 and 12): reading the journal costs memory in
/// proportion to its valid content, never to its junk, and nothing is written that the next
/// start would refuse to read.
@Suite(Hang.timeLimit(minutes: 3), .onDedicatedThread) struct JournalReadCapTests {
    static let name = EventJournal.fileName
    /// The documented cap (Docs/Reliability.md), as a number: the tests below must fail if the
    /// constant drifts back up (it was 256 MiB, when a 48 MiB file of junk was read twice).
    static let documentedCap = 48 << 20

    /// Bytes read from the journal while `body` runs: every byte read is held in memory.
    private static func bytesRead(in dir: TemporaryDirectory, _ body: () throws -> Void) throws -> Int {
        try FileOperationLog.counting(under: dir.root.path, body).counts.bytesRead
    }

    private static func asideFiles(in dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.storage.path).filter { $0.hasPrefix(name + ".corrupt") }
    }

    @Test func p7_aFileOfNewlinesPastTheCapIsSetAsideWithoutBeingRead() throws {
        try TemporaryDirectory.with { dir in
            try dir.write(Data(repeating: JournalReplay.newline, count: Self.documentedCap + 1), to: Self.name)
            var loaded: [TrackedEvent] = []
            let read = try Self.bytesRead(in: dir) {
                loaded = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
            }
            #expect(loaded.isEmpty)
            #expect(read < 64 << 10, "the junk was read into memory: \(read) bytes")
            #expect(try Self.asideFiles(in: dir).count == 1)
        }
    }

    @Test func p7_junkAfterAValidHeaderPastTheCapIsSetAsideWithoutBeingRead() throws {
        try TemporaryDirectory.with { dir in
            var data = JournalHeader.line
            data.append(Data(repeating: UInt8(ascii: "x"), count: Self.documentedCap))
            try dir.write(data, to: Self.name)
            var loaded: [TrackedEvent] = []
            let read = try Self.bytesRead(in: dir) {
                loaded = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
            }
            #expect(loaded.isEmpty)
            #expect(read < 64 << 10, "the junk was read into memory: \(read) bytes")
            #expect(try Self.asideFiles(in: dir).count == 1)
        }
    }

    @Test func p7_aReplayDecodesAtMostCapacityItems() throws {
        var data = JournalHeader.line
        let events = (0..<5).map { Fixtures.event($0) }
        for event in events { data.append(try JournalEntry.append(event).line()) }
        data.append(try JournalEntry.remove(events[0].id).line())
        data.append(try JournalEntry.update(events[1]).line())
        let replay = try JournalReplay.replay(data, capacity: 3)
        #expect(replay.events.ordered == [events[1], events[2]], "the first three, less the removed one")
        #expect(replay.unreadableLines == 2, "the appends past the capacity")
    }

    /// The heavy tests below (tens of MiB, 100,000 items) run on a thread of their own: on the
    /// concurrency pool (as many threads as cores) they would hold it for seconds and stall every
    /// other suite's `await`.
    @Test func p7_aLegitimateQueueAtCapacityLoads() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let capacity = EventQueueLimits.defaultCapacity
            let (size, loaded, aside) = try await onDedicatedThread {
                var data = JournalHeader.line
                for index in 0..<capacity { data.append(try JournalEntry.append(Fixtures.event(index)).line()) }
                try dir.write(data, to: Self.name)
                let loaded = FileEventQueueStore(directory: dir.storage, logger: LineLog(), capacity: capacity).load()
                return (data.count, loaded.count, try Self.asideFiles(in: dir))
            }
            #expect(size <= POSIXFile.journalAppendLimit, "a typical item fits the cap at capacity")
            #expect(loaded == capacity)
            #expect(aside.isEmpty)
        }
    }

    /// An item of about 60 KiB, so the cap is reached in a few hundred appends.
    private static func large(_ index: Int) -> TrackedEvent {
        TrackedEvent(
            kind: .event(type: "large"), customerIds: Fixtures.identified,
            properties: ["blob": .string(String(repeating: "a", count: 60 << 10)), "index": .int(index)],
            timestamp: Date(timeIntervalSinceReferenceDate: 786_000_000), failedAttempts: 0)
    }

    @Test func p7_e6_anAppendPastTheCapIsRefusedWithStorageAndEverythingAcceptedLoads() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let (refusal, size, accepted, reloaded) = try await onDedicatedThread {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                _ = store.load()
                var accepted: [TrackedEvent] = []
                var refusal: SegmentsError?
                for index in 0..<1_000 {
                    let event = Self.large(index)
                    do {
                        try store.append(event)
                        accepted.append(event)
                    } catch let error as SegmentsError {
                        refusal = error
                        break
                    }
                }
                let size = try FileManager.default.attributesOfItem(atPath: dir.file(Self.name).path)[.size] as? Int
                let reloaded = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
                return (refusal, size, accepted, reloaded)
            }
            #expect(refusal?.code == .storage)
            #expect(refusal?.message.contains("full") == true)
            #expect(try #require(size) <= POSIXFile.journalAppendLimit)
            #expect(reloaded.count == accepted.count)
            #expect(reloaded == accepted)
        }
    }

    @Test func p7_e6_compactionMakesRoomBeforeAnAppendIsRefused() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let (expected, reloaded) = try await onDedicatedThread {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                _ = store.load()
                var accepted: [TrackedEvent] = []
                for index in 0..<1_000 {
                    let event = Self.large(index)
                    guard (try? store.append(event)) != nil else { break }
                    accepted.append(event)
                }
                // Uploads remove items: their lines are dead, so the next append fits once compacted.
                for event in accepted.prefix(100) { try store.remove(id: event.id) }
                let next = Self.large(5_000)
                try store.append(next)
                let reloaded = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
                return (Array(accepted.dropFirst(100)) + [next], reloaded)
            }
            #expect(reloaded == expected)
        }
    }
}
