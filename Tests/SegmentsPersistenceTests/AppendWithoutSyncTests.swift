import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour R1, R2 for every append, not only the first (`FirstAppendTests`): the caller's thread
/// pays one `write` per item and never an `fsync`, whether the queue was read or not; durability
/// against power loss is ``FileEventQueueStore/sync()``'s, called off the caller's thread.
@Suite(Hang.timeLimit(minutes: 1)) struct AppendWithoutSyncTests {
    private func expectWritesWithoutSync(
        _ counts: FileOperationCounts, appends: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(counts.writes == appends, "one write per append", sourceLocation: sourceLocation)
        #expect(counts.syncs == 0, "no fsync", sourceLocation: sourceLocation)
        #expect(counts.directorySyncs == 0, "no directory fsync", sourceLocation: sourceLocation)
        #expect(counts.reads == 0, "no read", sourceLocation: sourceLocation)
    }

    @Test func r1_r2_noAppendOfALoadedQueueSyncsOnTheCallersThread() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load().isEmpty)
            let events = Fixtures.events(50)
            let counts = try FileOperationLog.counting(under: dir.root.path) {
                for event in events { try store.append(event) }
            }.counts
            expectWritesWithoutSync(counts, appends: 50)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == events, "written, unsynced")
        }
    }

    @Test func r1_r2_noAppendBeforeTheQueueIsReadSyncsOnTheCallersThread() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            do {
                let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in stored { try writer.append(event) }
                try writer.sync()
            }
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let later = (3..<40).map { Fixtures.event($0) }
            let counts = try FileOperationLog.counting(under: dir.root.path) {
                for event in later { try store.append(event) }
            }.counts
            expectWritesWithoutSync(counts, appends: later.count)
            #expect(store.load() == stored + later)
        }
    }
}
