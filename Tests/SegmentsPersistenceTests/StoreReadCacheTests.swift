import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// The customer and baseline stores read their file once (see Behaviour R1): later reads, and
/// reads after a save, are answered from memory without touching the disk.
@Suite(Hang.timeLimit(minutes: 1)) struct StoreReadCacheTests {
    @Test func r1_theCustomerStoreReadsItsFileOnceAndNotAfterASave() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == Fixtures.identified)
            let again = FileOperationLog.counting(under: dir.root.path) { store.load() }
            #expect(again.result == Fixtures.identified)
            #expect(again.counts.reads == 0 && again.counts.opens == 0)

            let fresh = FileCustomerStore(directory: dir.storage, logger: LineLog())
            try fresh.save(Fixtures.anonymous)
            let afterSave = FileOperationLog.counting(under: dir.root.path) { fresh.load() }
            #expect(afterSave.result == Fixtures.anonymous)
            #expect(afterSave.counts.reads == 0 && afterSave.counts.opens == 0)
        }
    }

    @Test func r1_theBaselineStoreReadsItsFileOnceAndNotAfterASave() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == Fixtures.baseline)
            let again = FileOperationLog.counting(under: dir.root.path) { store.load() }
            #expect(again.result == Fixtures.baseline)
            #expect(again.counts.reads == 0 && again.counts.opens == 0)

            let fresh = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            try fresh.save(.empty)
            let afterSave = FileOperationLog.counting(under: dir.root.path) { fresh.load() }
            #expect(afterSave.result == .empty)
            #expect(afterSave.counts.reads == 0 && afterSave.counts.opens == 0)
        }
    }
}
