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
            #expect(store.load().isEmpty)
            try store.sync()
            #expect(dir.contents(of: Self.fileName) == JournalHeader.line)

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
