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

/// Apple's condition imposed on Linux (see Behaviour P8): before the device's first unlock, every
/// `open` of a file protected until then fails with `EPERM` or `EACCES`. The fault seam refuses
/// every open under the test's folder while `refused` runs, then the folder recovers, as after
/// the unlock. Nothing may be deleted or set aside meanwhile, and the retry must bring the disk to
/// the right state.
@Suite(Hang.timeLimit(minutes: 2)) struct ProtectedDataTests {
    /// Runs `body` while every `open` under `dir` fails with `code`.
    func refused<Result>(_ dir: TemporaryDirectory, errno code: Int32 = EPERM, _ body: () throws -> Result) rethrows -> Result {
        try FileOperationLog.failing([InjectedFileFault(.open, errno: code, times: 100_000)], under: dir.root.path, body)
    }

    /// The customer a fresh store (another process) reads from disk.
    func customerOnDisk(_ dir: TemporaryDirectory) -> CustomerIds? {
        FileCustomerStore(directory: dir.storage, logger: LineLog()).load()
    }

    func setAside(_ dir: TemporaryDirectory) -> [String] {
        dir.entries().filter { $0.contains(".corrupt-") }
    }

    @Test func p8_aCustomerSaveRefusedWithEPERMDeletesNothingAndIsWrittenWhenProtectedDataIsAvailable() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let store = FileCustomerStore(directory: dir.storage, logger: log)
            try store.save(Fixtures.identified)
            let next = CustomerIds(["cookie": Fixtures.cookie, "registered": "next@example.com"])

            try refused(dir) { try store.save(next) }

            #expect(customerOnDisk(dir) == Fixtures.identified, "the old customer is still on disk")
            #expect(store.load() == next, "memory has the new one")
            #expect(setAside(dir).isEmpty)
            #expect(log.problems.contains { $0.contains("protected data") })
            #expect(store.retryAfterProtectedData() == .saved)
            #expect(customerOnDisk(dir) == next)
            #expect(store.retryAfterProtectedData() == .nothingNew, "written once")
        }
    }

    @Test func p8_aCustomerFileRefusedWithEACCESIsNeitherSetAsideNorReplacedBeforeItIsRead() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
            let madeMeanwhile = CustomerIds(cookie: "made-before-the-first-unlock")

            try refused(dir, errno: EACCES) {
                #expect(store.load() == nil)
                try store.save(madeMeanwhile)
                #expect(store.load() == madeMeanwhile)
                #expect(store.retryAfterProtectedData() == .nothingNew, "still refused")
            }
            // Unlocked, but the signal is not handled yet: a save now must not replace the file
            // this store has not read.
            let madeLater = CustomerIds(cookie: "saved-between-the-unlock-and-the-signal")
            try store.save(madeLater)
            #expect(store.load() == madeLater)
            #expect(setAside(dir).isEmpty)
            #expect(customerOnDisk(dir) == Fixtures.identified, "a customer made for lack of the file never replaces it")

            #expect(store.retryAfterProtectedData() == .read(Fixtures.identified))
            #expect(store.load() == Fixtures.identified)
            #expect(customerOnDisk(dir) == Fixtures.identified)
        }
    }

    @Test func p8_aBaselineSaveRefusedWithEPERMKeepsTheOldFileUntilTheRetryWritesTheNewOne() throws {
        try TemporaryDirectory.with { dir in
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            try store.save(Fixtures.baseline)

            try refused(dir) { try store.save(.empty) }

            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.baseline)
            #expect(setAside(dir).isEmpty)
            #expect(store.retryAfterProtectedData())
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == .empty)
        }
    }

    @Test func p8_aVisitorFileRefusedWithEPERMIsNotReplacedByOneVisitor() throws {
        try TemporaryDirectory.with { dir in
            let segments = VisitorSegments(country: "US", customSegments: ["a"])
            try FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).save(segments, forVisitor: "first")
            let store = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())

            refused(dir) {
                #expect(store.segments(forVisitor: "first") == nil)
                #expect(throws: SegmentsError.self) { try store.save(segments, forVisitor: "second") }
            }

            #expect(setAside(dir).isEmpty)
            #expect(FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).segments(forVisitor: "first") == segments)
            try store.save(segments, forVisitor: "second")
            let reread = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(reread.segments(forVisitor: "first") == segments && reread.segments(forVisitor: "second") == segments)
        }
    }

    @Test func p8_eventsAppendedWhileTheQueueFileIsRefusedAreKeptAndWrittenAfterTheStoredOnes() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(4)
            let previous = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try previous.append(events[0])
            try previous.append(events[1])
            try previous.sync()
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())

            try refused(dir, errno: EACCES) {
                #expect(store.load().isEmpty, "nothing readable yet, nothing set aside")
                try store.append(events[2])
                try store.append(events[3])
                #expect(store.load().map(\.id) == [events[2].id, events[3].id])
                #expect(store.retryAfterProtectedData() == nil, "still refused")
            }
            #expect(setAside(dir).isEmpty)

            #expect(store.retryAfterProtectedData()?.map(\.id) == events.map(\.id))
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().map(\.id) == events.map(\.id))
        }
    }

    @Test func p8_anItemRemovedWhileKeptInMemoryIsNeverWritten() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(2)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try refused(dir) {
                #expect(store.load().isEmpty)
                try store.append(events[0])
                try store.append(events[1])
                try store.remove(id: events[0].id)  // uploaded before the unlock
            }
            #expect(store.retryAfterProtectedData()?.map(\.id) == [events[1].id])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().map(\.id) == [events[1].id])
        }
    }

    @Test func p8_theOwnerLockRefusedWithEPERMIsTakenWhenProtectedDataIsAvailable() throws {
        try TemporaryDirectory.with { dir in
            let lock = try refused(dir) { try StorageDirectoryLock.acquire(dir.storage) }
            #expect(throws: SegmentsError.self) { try refused(dir) { try lock.retryAfterProtectedData() } }
            do {
                // Not held yet: another owner could take it now (and is refused the retry's way).
                let other = try StorageDirectoryLock.acquire(dir.storage)
                #expect(throws: SegmentsError.self) { try lock.retryAfterProtectedData() }
                _ = other
            }

            try lock.retryAfterProtectedData()

            #expect(throws: SegmentsError.self, "held now") { try StorageDirectoryLock.acquire(dir.storage) }
            try lock.retryAfterProtectedData()  // held: nothing to do
        }
    }

    @Test func p8_onlyEPERMAndEACCESOfOpenReadAndWriteMeanProtectedDataIsUnavailable() {
        #expect(POSIXFile.failure("open", "/x/customer.json", code: EPERM).isProtectedDataUnavailable)
        #expect(POSIXFile.failure("read", "/x/customer.json", code: EACCES).isProtectedDataUnavailable)
        #expect(POSIXFile.failure("write", "/x/customer.json", code: EPERM).isProtectedDataUnavailable)
        #expect(POSIXFile.failure("create", "/x/customer.json", code: EACCES).isProtectedDataUnavailable)
        #expect(!POSIXFile.failure("open", "/x/customer.json", code: ENOSPC).isProtectedDataUnavailable)
        #expect(!POSIXFile.failure("rename", "/x/customer.json", code: EACCES).isProtectedDataUnavailable)
        #expect(!POSIXFile.failure("link", "/x/customer.json", code: EPERM).isProtectedDataUnavailable)
        #expect(SegmentsError.wrapping(POSIXFile.failure("open", "/x/a", code: EPERM), as: .storage).isProtectedDataUnavailable)
    }
}
