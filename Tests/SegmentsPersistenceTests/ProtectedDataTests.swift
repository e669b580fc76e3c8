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
/// the unlock; the stores are told protected data is unavailable (`unavailable`), which is what
/// makes those refusals transient (the same refusals while it is available are storage errors:
/// `PermissionRefusalTests`). Nothing may be deleted or set aside meanwhile, and the retry must
/// bring the disk to the right state.
@Suite(Hang.timeLimit(minutes: 2)) struct ProtectedDataTests {
    /// What the platform reports before the first unlock.
    let unavailable = ManualProtectedDataAvailability()

    func customerStore(_ dir: TemporaryDirectory, log: LineLog = LineLog()) -> FileCustomerStore {
        FileCustomerStore(directory: dir.storage, logger: log, protectedData: unavailable)
    }

    func baselineStore(_ dir: TemporaryDirectory, log: LineLog = LineLog()) -> FileSegmentBaselineStore {
        FileSegmentBaselineStore(directory: dir.storage, logger: log, protectedData: unavailable)
    }

    func eventStore(_ dir: TemporaryDirectory, log: LineLog = LineLog()) -> FileEventQueueStore {
        FileEventQueueStore(directory: dir.storage, logger: log, capacity: 100, protectedData: unavailable)
    }

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
            let store = FileCustomerStore(directory: dir.storage, logger: log, protectedData: unavailable)
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
            let store = customerStore(dir)
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
            let store = baselineStore(dir)
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
            do {
                let store = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())

                refused(dir) {
                    #expect(store.segments(forVisitor: "first") == nil)
                    #expect(throws: SegmentsError.self) { try store.save(segments, forVisitor: "second") }
                }

                #expect(setAside(dir).isEmpty)
                #expect(store.segments(forVisitor: "first") == segments)
                try store.save(segments, forVisitor: "second")
            }  // the store and its owner lock (P5) end here
            let reread = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(reread.segments(forVisitor: "first") == segments && reread.segments(forVisitor: "second") == segments)
        }
    }

    /// Issue 34 item 7: a save that came before the first load, refused, made the retry write the
    /// customer kept in memory over a file nobody had read.
    @Test func p8_aCustomerSavedBeforeItsFirstLoadIsNeverWrittenOverTheUnreadFileByTheRetry() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)
            let store = customerStore(dir)
            let madeMeanwhile = CustomerIds(cookie: "saved-before-any-load")

            try refused(dir) { try store.save(madeMeanwhile) }  // no load before it
            #expect(store.load() == madeMeanwhile, "kept in memory")

            #expect(store.retryAfterProtectedData() == .read(Fixtures.identified), "read first; its owner decides")
            #expect(customerOnDisk(dir) == Fixtures.identified, "not written over before it was read")
            #expect(setAside(dir).isEmpty)
            try store.save(madeMeanwhile)  // the owner's decision, after the read
            #expect(customerOnDisk(dir) == madeMeanwhile)
        }
    }

    @Test func p8_aCustomerSavedBeforeItsFirstLoadWithNoFileIsReadAsMissingThenSavedByItsOwner() throws {
        try TemporaryDirectory.with { dir in
            let store = customerStore(dir)
            let madeMeanwhile = CustomerIds(cookie: "saved-before-any-load")
            try refused(dir) { try store.save(madeMeanwhile) }

            #expect(store.retryAfterProtectedData() == .read(nil), "nothing stored: the owner saves its own")
            #expect(customerOnDisk(dir) == nil)
        }
    }

    /// Issue 34 item 7: the retry wrote the baseline kept in memory without reading the file first.
    @Test func p8_aBaselineSavedBeforeItsFirstLoadIsReadByTheRetryAndNotWrittenOverAStoredOne() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let store = baselineStore(dir)

            try refused(dir) { try store.save(.empty) }  // no load before it

            #expect(!store.retryAfterProtectedData(), "read, not written")
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.baseline)
            #expect(store.load() == .empty, "memory keeps the newest: what the listeners were told")
            #expect(setAside(dir).isEmpty)
            try store.save(.empty)  // the next save, after the read, replaces it
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == .empty)
        }
    }

    /// Issue 32 finding 17: a baseline whose load was refused, and not saved before the retry,
    /// stayed unread after it, so every later save (the link memory made once protected data was
    /// available among them) was kept in memory only, and the next client linked again.
    @Test func p8_c4_aBaselineLoadedWhileRefusedIsWrittenBySavesAfterTheRetry() throws {
        try TemporaryDirectory.with { dir in
            let store = baselineStore(dir)
            #expect(refused(dir) { store.load() } == .empty)

            #expect(!store.retryAfterProtectedData(), "nothing kept in memory to write")
            try store.save(Fixtures.baseline)  // the link, made after the unlock

            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.baseline)
        }
    }

    @Test func p8_aBaselineLoadedWhileRefusedIsReadByTheRetry() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let store = baselineStore(dir)
            #expect(refused(dir) { store.load() } == .empty)

            #expect(!store.retryAfterProtectedData(), "read, not written")
            #expect(store.load() == Fixtures.baseline, "what the file holds, as for a store made now")
            #expect(setAside(dir).isEmpty)
        }
    }

    @Test func p8_aBaselineSavedBeforeItsFirstLoadIsWrittenByTheRetryWhenNoFileExists() throws {
        try TemporaryDirectory.with { dir in
            let store = baselineStore(dir)
            try refused(dir) { try store.save(Fixtures.baseline) }
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == .empty)

            #expect(store.retryAfterProtectedData(), "read as missing, then written")
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.baseline)
        }
    }

    @Test func p8_eventsAppendedWhileTheQueueFileIsRefusedAreKeptAndWrittenAfterTheStoredOnes() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(4)
            let previous = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try previous.append(events[0])
            try previous.append(events[1])
            try previous.sync()
            let store = eventStore(dir)

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
            let store = eventStore(dir)
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
            let refusals = StorageRefusals(protectedData: unavailable)
            let lock = try refused(dir) { try StorageDirectoryLock.acquire(dir.storage, refusals: refusals) }
            #expect(!lock.isHeld)
            #expect(throws: SegmentsError.self) { try refused(dir) { try lock.retryAfterProtectedData() } }
            do {
                // Not held yet: another owner could take it now (and is refused the retry's way).
                let other = try StorageDirectoryLock.acquire(dir.storage)
                #expect(throws: SegmentsError.self) { try lock.retryAfterProtectedData() }
                _ = other
            }

            try lock.retryAfterProtectedData()

            #expect(lock.isHeld)
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
