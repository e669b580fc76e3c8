import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Which journal changes wait for an fsync (see Behaviour R2, E4): an update is synced before it
/// returns (a permanent-failure count must not come back lower), a removal is not (a removed item
/// that comes back after a power cut is uploaded again, a duplicate E4 accepts).
@Suite(Hang.timeLimit(minutes: 1)) struct JournalSyncPolicyTests {
    /// A loaded store holding `event`, synced.
    private func store(holding event: TrackedEvent, in dir: TemporaryDirectory) throws -> FileEventQueueStore {
        let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
        _ = store.load()
        try store.append(event)
        try store.sync()
        return store
    }

    @Test func r2_e4_aRemovalIsWrittenButNotSynced() throws {
        try TemporaryDirectory.with { dir in
            let event = Fixtures.event(0)
            let store = try store(holding: event, in: dir)
            let counts = try FileOperationLog.counting(under: dir.root.path) { try store.remove(id: event.id) }.counts
            #expect(counts.writes == 1)
            #expect(counts.syncs == 0)
        }
    }

    @Test func r2_e3_anUpdateIsSyncedBeforeItReturns() throws {
        try TemporaryDirectory.with { dir in
            var event = Fixtures.event(0)
            let store = try store(holding: event, in: dir)
            event.failedAttempts = 1
            let counts = try FileOperationLog.counting(under: dir.root.path) { try store.update(event) }.counts
            #expect(counts.writes == 1)
            #expect(counts.syncs >= 1)
        }
    }
}
