import Foundation
import SegmentsDomain
@testable import SegmentsPersistence
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A save that fails (a full disk, simulated: `ENOSPC` before any byte is written) must not leave
/// the old file to come back after a restart — after `anonymize()` that would be a lost logout:
/// the logged-out customer's hard ids, or its segments and link memory. Deleting needs no space.
@Suite(Hang.timeLimit(minutes: 2)) struct FailedSaveTests {
    /// A storage directory whose next writes of any file fail with `ENOSPC` while `full` is set.
    final class Disk: Sendable {
        private let isFull = Locked(false)
        var full: Bool {
            get { isFull.value }
            set { isFull.withLock { $0 = newValue } }
        }

        func storage(_ url: URL) -> StorageDirectory {
            StorageDirectory(url: url) { [self] _ in full ? ENOSPC : nil }
        }
    }

    @Test func a1_aFailedCustomerSaveDeletesTheOldIdsSoARestartCannotBringThemBack() throws {
        try TemporaryDirectory.with { dir in
            let disk = Disk()
            let log = LineLog()
            let store = FileCustomerStore(storage: disk.storage(dir.storage), logger: log)
            try store.save(Fixtures.identified)
            disk.full = true

            let logout = CustomerIds(cookie: "new-anonymous-cookie")
            let error = #expect(throws: SegmentsError.self) { try store.save(logout) }

            #expect(error?.code == .storage)
            #expect(error?.message.contains("deleted") == true)
            #expect(error.map { !"\($0)".contains(dir.root.path) } == true, "no path in the error")
            #expect(store.load() == nil, "the store no longer answers the old customer either")
            let restarted = FileCustomerStore(directory: dir.storage, logger: LineLog())
            #expect(restarted.load() == nil, "a restart starts a new anonymous customer")
            #expect(dir.contents(of: FileCustomerStore.fileName) == nil)
            #expect(log.problems.contains { $0.contains("deleted") })
        }
    }

    @Test func a1_aFailedBaselineSaveDeletesTheOldBaseline() throws {
        try TemporaryDirectory.with { dir in
            let disk = Disk()
            let store = FileSegmentBaselineStore(storage: disk.storage(dir.storage), logger: LineLog())
            try store.save(Fixtures.baseline)
            disk.full = true

            let error = #expect(throws: SegmentsError.self) { try store.save(.empty) }

            #expect(error?.code == .storage)
            #expect(store.load() == .empty)
            let restarted = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            #expect(restarted.load() == .empty, "no segments or link memory of the old customer")
            #expect(dir.contents(of: FileSegmentBaselineStore.fileName) == nil)
        }
    }

    @Test func p2_theStoreWorksAgainOnceTheDiskHasRoom() throws {
        try TemporaryDirectory.with { dir in
            let disk = Disk()
            let store = FileCustomerStore(storage: disk.storage(dir.storage), logger: LineLog())
            try store.save(Fixtures.identified)
            disk.full = true
            #expect(throws: SegmentsError.self) { try store.save(Fixtures.anonymous) }
            disk.full = false
            try store.save(Fixtures.anonymous)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.anonymous)
        }
    }
}
