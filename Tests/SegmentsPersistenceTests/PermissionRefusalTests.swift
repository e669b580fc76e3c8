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

/// Behaviour P8, rev 4: a refusal (`EACCES`/`EPERM`) is transient only while the platform reports
/// protected data unavailable. Anywhere else — Linux and macOS always, Apple's mobile platforms
/// after the first unlock — it is a permission problem: a `.storage` error naming the file, no
/// lock taken without its file, nothing kept only in memory, and no log line about a first unlock.
///
/// The tests run as root here, and root ignores permission bits, so the refusals come from the
/// fault seam (`FileOperationLog.failing`), which makes a call fail with the `errno` a real
/// refusal sets; the `realPermissions` tests repeat the main cases with real modes and skip
/// themselves only under root.
@Suite(Hang.timeLimit(minutes: 2)) struct PermissionRefusalTests {
    /// What Linux, macOS and an unlocked device report.
    let available = ManualProtectedDataAvailability(isAvailable: true)

    var refusals: StorageRefusals { StorageRefusals(protectedData: available) }

    /// Runs `body` while every `open` of `name` in the storage folder (or of every file in it, when
    /// `nil`) fails with `code`.
    func refusing<Result>(
        _ dir: TemporaryDirectory, _ name: String? = nil, errno code: Int32 = EACCES, _ body: () throws -> Result
    ) rethrows -> Result {
        let path = name.map { dir.file($0).path } ?? dir.storage.path
        return try FileOperationLog.failing([InjectedFileFault(.open, errno: code, times: 100_000)], under: path, body)
    }

    func events(_ dir: TemporaryDirectory, log: LineLog = LineLog()) -> FileEventQueueStore {
        FileEventQueueStore(directory: dir.storage, logger: log, capacity: 100, protectedData: available)
    }

    /// No line says the device's first unlock, or protected data, is what is waited for.
    func saysNothingOfAFirstUnlock(_ log: LineLog) -> Bool {
        !log.lines.contains { $0.contains("first unlock") || $0.contains("until protected data") }
    }

    // MARK: - (a) The owner lock

    @Test(arguments: [EACCES, EPERM])
    func p8_p5_aRefusedLockFileIsAStorageErrorNamingOwnerLockNotALockToTakeLater(code: Int32) throws {
        try TemporaryDirectory.with { dir in
            let error = try #require(throws: SegmentsError.self) {
                try refusing(dir, StorageDirectoryLock.fileName, errno: code) {
                    try StorageDirectoryLock.acquire(dir.storage, refusals: refusals)
                }
            }
            #expect(error.code == .storage)
            #expect(error.message.contains("owner.lock"))
            #expect(!error.isProtectedDataUnavailable, "not a wait for protected data")
            #expect(!error.message.contains(dir.storage.path), "never the directory (P4)")
        }
    }

    #if !os(iOS) && !os(visionOS)  // without a report, these keep a refusal transient (StorageRefusals)
    @Test func p8_p5_onLinuxAndMacOSALockFileRefusedWithoutAReportIsAStorageErrorToo() throws {
        try TemporaryDirectory.with { dir in
            let error = #expect(throws: SegmentsError.self) {
                try refusing(dir, StorageDirectoryLock.fileName) { try StorageDirectoryLock.acquire(dir.storage) }
            }
            #expect(error?.message.contains("owner.lock") == true)
        }
    }
    #endif

    // MARK: - (b) The event queue

    @Test func p8_aRefusedQueueFileRefusesTheAppendAndKeepsNothingInMemory() throws {
        try TemporaryDirectory.with { dir in
            let earlier = Fixtures.events(4)
            do {
                let previous = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                try previous.append(earlier[0])
                try previous.sync()
            }
            let log = LineLog()
            let store = events(dir, log: log)

            try refusing(dir, "event-queue.journal") {
                #expect(store.load().isEmpty, "unreadable: nothing known")
                let error = try #require(throws: SegmentsError.self) { try store.append(earlier[1]) }
                #expect(error.code == .storage)
                #expect(error.message.contains("event-queue.journal"))
                #expect(!error.isProtectedDataUnavailable)
                #expect(throws: SegmentsError.self) { try store.append(earlier[2]) }
                #expect(store.load().isEmpty, "nothing accepted lives only in memory")
                #expect(store.retryAfterProtectedData() == nil)
            }
            #expect(saysNothingOfAFirstUnlock(log))
            #expect(log.problems.contains { $0.contains("Could not open the event queue") })

            // The file was neither set aside nor changed; what was accepted is all there.
            #expect(dir.entries().allSatisfy { !$0.contains(".corrupt-") })
            try store.append(earlier[3])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().map(\.id) == [earlier[0].id, earlier[3].id])
        }
    }

    @Test func p8_aWriteRefusedToAnOpenQueueFileIsAStorageErrorNotAnItemKeptInMemory() throws {
        try TemporaryDirectory.with { dir in
            let items = Fixtures.events(3)
            let store = events(dir)
            try store.append(items[0])
            try FileOperationLog.failing([InjectedFileFault(.write, errno: EACCES, times: 1)], under: dir.storage.path) {
                let error = try #require(throws: SegmentsError.self) { try store.append(items[1]) }
                #expect(!error.isProtectedDataUnavailable)
            }
            try store.append(items[2])
            #expect(store.load().map(\.id) == [items[0].id, items[2].id])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().map(\.id) == [items[0].id, items[2].id])
        }
    }

    // MARK: - The customer, baseline and visitor files

    @Test func p8_aRefusedCustomerFileIsAStorageErrorAndNeverReplacedUnread() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)
            let log = LineLog()
            let store = FileCustomerStore(directory: dir.storage, logger: log, protectedData: available)
            let other = CustomerIds(cookie: "made-for-lack-of-the-file")

            try refusing(dir, "customer.json") {
                let error = try #require(throws: SegmentsError.self) { try store.checkReadable() }
                #expect(error.code == .storage)
                #expect(error.message.contains("customer.json"))
                #expect(!error.isProtectedDataUnavailable)
                #expect(store.load() == nil)
                #expect(throws: SegmentsError.self, "neither written over it nor kept in memory") { try store.save(other) }
                #expect(store.load() == nil)
            }
            #expect(saysNothingOfAFirstUnlock(log))
            #expect(log.problems.contains { $0.contains("customer.json") && $0.contains("left as it is") })
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.identified)
            #expect(dir.entries().allSatisfy { !$0.contains(".corrupt-") })

            // Readable again: read before the save replaces it.
            try store.checkReadable()
            #expect(store.load() == Fixtures.identified)
        }
    }

    @Test func p8_aRefusedCustomerSaveIsAFailedSaveNotACustomerKeptInMemory() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let store = FileCustomerStore(directory: dir.storage, logger: log, protectedData: available)
            try store.save(Fixtures.anonymous)

            try refusing(dir) {
                let error = try #require(throws: SegmentsError.self) { try store.save(Fixtures.identified) }
                #expect(!error.isProtectedDataUnavailable)
            }
            #expect(store.retryAfterProtectedData() == .nothingNew, "nothing was kept to write later")
            #expect(saysNothingOfAFirstUnlock(log))
        }
    }

    @Test func p8_aRefusedBaselineSaveIsAFailedSaveNotABaselineKeptInMemory() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: log, protectedData: available)
            try store.save(Fixtures.baseline)

            let error = refusing(dir) {
                #expect(throws: SegmentsError.self) { try store.save(.empty) }
            }
            #expect(error?.isProtectedDataUnavailable == false)
            #expect(!store.retryAfterProtectedData(), "nothing was kept to write later")
            #expect(saysNothingOfAFirstUnlock(log))
        }
    }

    @Test func p8_aRefusedVisitorFileIsNotReplacedAndItsSavesThrow() throws {
        try TemporaryDirectory.with { dir in
            let segments = VisitorSegments(country: "US")
            do {
                try FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).save(segments, forVisitor: "first")
            }
            let log = LineLog()
            let store = FileVisitorSegmentsStore(directory: dir.storage, logger: log)
            try refusing(dir, "visitor-segments.json") {
                #expect(store.segments(forVisitor: "first") == nil)
                let error = try #require(throws: SegmentsError.self) { try store.save(segments, forVisitor: "second") }
                #expect(error.message.contains("visitor-segments.json"))
            }
            #expect(saysNothingOfAFirstUnlock(log))
            #expect(store.segments(forVisitor: "first") == segments)
        }
    }

    // MARK: - (c) A read-only folder

    @Test func p8_aFolderThatRefusesEveryFileRefusesTheLockAndEveryWrite() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog()
            refusing(dir) {
                #expect(throws: SegmentsError.self) { try StorageDirectoryLock.acquire(dir.storage, refusals: refusals) }
                #expect(throws: SegmentsError.self) { try events(dir, log: log).append(Fixtures.event(0)) }
                #expect(throws: SegmentsError.self) {
                    try FileCustomerStore(directory: dir.storage, logger: log, protectedData: available).save(Fixtures.anonymous)
                }
            }
            #expect(saysNothingOfAFirstUnlock(log))
            #expect(dir.entries().isEmpty, "nothing written")
        }
    }

    // MARK: - Real permission bits (skipped under root, which ignores them)

    @Test(.enabled(if: geteuid() != 0, "root ignores permission bits; the fault-seam tests above cover this as root"))
    func p8_p5_realPermissions_aLockFileOfMode000IsAStorageError() throws {
        try TemporaryDirectory.with { dir in
            withExtendedLifetime(try StorageDirectoryLock.acquire(dir.storage, refusals: refusals)) {}
            #expect(chmod(dir.file(StorageDirectoryLock.fileName).path, 0) == 0)
            let error = #expect(throws: SegmentsError.self) { try StorageDirectoryLock.acquire(dir.storage, refusals: refusals) }
            #expect(error?.message.contains("owner.lock") == true)
        }
    }

    @Test(.enabled(if: geteuid() != 0, "root ignores permission bits; the fault-seam tests above cover this as root"))
    func p8_realPermissions_aQueueFileOfMode000RefusesTheAppend() throws {
        try TemporaryDirectory.with { dir in
            try events(dir).append(Fixtures.event(0))
            #expect(chmod(dir.file("event-queue.journal").path, 0) == 0)
            let store = events(dir)
            #expect(throws: SegmentsError.self) { try store.append(Fixtures.event(1)) }
            #expect(store.load().isEmpty)
        }
    }

    @Test(.enabled(if: geteuid() != 0, "root ignores permission bits; the fault-seam tests above cover this as root"))
    func p8_realPermissions_aReadOnlyFolderRefusesTheLock() throws {
        try TemporaryDirectory.with { dir in
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(chmod(dir.storage.path, 0o500) == 0)
            defer { _ = chmod(dir.storage.path, 0o700) }
            let error = #expect(throws: SegmentsError.self) { try StorageDirectoryLock.acquire(dir.storage, refusals: refusals) }
            #expect(error?.message.contains("owner.lock") == true)
        }
    }
}
