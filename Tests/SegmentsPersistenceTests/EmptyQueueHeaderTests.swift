import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// A queue file that a store created and loaded without appending gets its header at load (see
/// Behaviour P2, R3): it is never left empty, so the next start takes it for a sound queue, not
/// for damage to set aside.
@Suite(Hang.timeLimit(minutes: 1)) struct EmptyQueueHeaderTests {
    static let fileName = "event-queue.journal"

    @Test func p2_r3_aQueueCreatedAndLoadedWithoutAppendsHoldsItsHeader() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            // The header written at load is synced there, so a power cut cannot leave the file empty.
            let loading = FileOperationLog.counting(under: dir.root.path) { store.load() }
            #expect(loading.result.isEmpty)
            #expect(loading.counts.syncs >= 1)
            #expect(dir.contents(of: Self.fileName) == JournalHeader.line)
            // Loaded already: a second load touches nothing.
            let again = FileOperationLog.counting(under: dir.root.path) { store.load() }
            #expect(again.result.isEmpty)
            #expect(again.counts.writes == 0 && again.counts.syncs == 0 && again.counts.reads == 0)

            let reopenedLog = LineLog()
            let reopened = FileEventQueueStore(directory: dir.storage, logger: reopenedLog)
            #expect(reopened.load().isEmpty)
            #expect(reopenedLog.problems.isEmpty, "\(reopenedLog.problems)")
            #expect(dir.entries() == [Self.fileName])
            let event = Fixtures.event(1)
            try reopened.append(event)
            try reopened.sync()
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [event])
        }
    }
}
