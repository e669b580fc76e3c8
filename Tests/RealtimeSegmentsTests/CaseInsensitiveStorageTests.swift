import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

@testable import RealtimeSegments

/// Behaviour P10 and P5 in the process: the directory table knows a folder by device and inode, so
/// two spellings of one folder (on a case-insensitive volume) are one folder with one owner; and a
/// default folder named by an earlier version is moved when a client configures.
///
/// Linux's file systems are case-sensitive: the table is given a view of the file system that folds
/// the case of the last path component, as APFS and HFS+ do by default.
@Suite(Hang.timeLimit(minutes: 2)) struct CaseInsensitiveStorageTests {
    /// The identity a case-folding volume gives `path`: that of its lower-case spelling.
    private static let foldingCase: @Sendable (String) -> DirectoryIdentity? = { path in
        let url = URL(fileURLWithPath: path)
        return DirectoryIdentity.of(url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent.lowercased()).path)
    }

    /// Waits, at most 10 s and off the test's thread, until the work queued on `queue` so far has run.
    private static func settled(_ queue: DispatchQueue) async -> Bool {
        await onDedicatedThread {
            let done = DispatchSemaphore(value: 0)
            queue.async { done.signal() }
            return done.wait(timeout: .now() + Hang.scaled(10)) == .success
        }
    }

    @Test func p10_p5_twoSpellingsOfOneFolderAreOneEntryOfTheDirectoryTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.url.appendingPathComponent("store", isDirectory: true)
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        let table = DirectoryTable<Int>(keepingWhile: { _ in true }, identify: Self.foldingCase)

        let first = table.withEntry(of: store, make: { 0 }) { uses -> Int in uses += 1; return uses }
        let second = table.withEntry(of: directory.url.appendingPathComponent("STORE"), make: { 0 }) { uses -> Int in uses += 1; return uses }
        let third = table.withEntry(of: directory.url.appendingPathComponent("Store/."), make: { 0 }) { uses -> Int in uses += 1; return uses }

        let counts: [Int] = [first, second, third]
        #expect(counts == [1, 2, 3], "one folder, one entry")
    }

    /// The second client of the process on another spelling of a claimed folder is refused with an
    /// error that says so — not "in use by another process", which sent people looking for one —
    /// and takes the folder over, with what the first handed over, once the first releases it.
    @Test func p10_p5_aClientClaimingAnotherSpellingOfAClaimedFolderIsToldItIsOneFolderOfThisProcess() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.url.appendingPathComponent("store", isDirectory: true)
        let table = FileStoreRegistry.makeTable(identify: Self.foldingCase)
        let logger = RecordingLogger()
        let owner = NSObject(), other = NSObject()
        let queue = DispatchQueue(label: "test.p10.owner"), otherQueue = DispatchQueue(label: "test.p10.other")

        let first = try FileStoreRegistry.claim(store, for: owner, queue: queue, logger: logger, in: table)
        let error = #expect(throws: SegmentsError.self) {
            try FileStoreRegistry.claim(
                directory.url.appendingPathComponent("STORE"), for: other, queue: otherQueue, logger: logger, in: table)
        }
        #expect(error?.code == .storage)
        let message = error?.message ?? ""
        #expect(message.contains("in this process") && message.contains("same folder"), "\(message)")
        #expect(!message.contains("another process"), "\(message)")

        FileStoreRegistry.release(first, customer: CustomerIds(cookie: "handed-over"), writes: DispatchGroup(), in: table)
        let taken = try FileStoreRegistry.claim(
            directory.url.appendingPathComponent("Store"), for: other, queue: otherQueue, logger: logger, in: table)
        #expect(taken.lock === first.lock, "one folder, one lock")
        #expect(taken.stores.customer === first.stores.customer, "one folder, one set of stores")
        #expect(taken.previousCustomer == CustomerIds(cookie: "handed-over"))
        FileStoreRegistry.release(taken, customer: nil, writes: DispatchGroup(), in: table)
    }

    /// The upgrade, end to end: a client configured on the default folder of an id with upper-case
    /// letters finds the customer an earlier version stored under the id's earlier folder name, and
    /// the folder now has its case-safe name. (It plants the folder in this machine's default data
    /// directory, under a unique id, and removes it.)
    @Test func p10_aClientOnTheDefaultFolderFindsTheCustomerOfTheFolderAnEarlierVersionNamed() async throws {
        let id = "Case-\(UUID().uuidString.prefix(8))"
        let integrationId = "custom-\(id)"
        let earlier = StorageLocation.earlierDefaultDirectory(integrationId: integrationId)
        let current = StorageLocation.defaultDirectory(integrationId: integrationId)
        defer {
            try? FileManager.default.removeItem(at: earlier)
            try? FileManager.default.removeItem(at: current)
        }
        #expect(earlier.lastPathComponent == integrationId && current.lastPathComponent != integrationId)
        try FileCustomerStore(directory: earlier, logger: RecordingLogger()).save(CustomerIds(cookie: "stored-before-the-upgrade"))

        let storageQueue = DispatchQueue(label: "test.p10.storage")
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), storage: .directory(nil),
                storageQueue: storageQueue))
        try client.configure(
            .init(backend: .custom(id: id, repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()), flushingMode: .manual))
        #expect(await eventually(timeout: 10) { client.customerCookie == "stored-before-the-upgrade" }, "\(String(describing: client.customerCookie))")
        client.stop()
        #expect(await Self.settled(storageQueue), "the client's disk work ends before the folder is read and removed")

        #expect(!FileManager.default.fileExists(atPath: earlier.path))
        #expect(FileCustomerStore(directory: current, logger: RecordingLogger()).load()?.cookie == "stored-before-the-upgrade")
    }

    /// The ODP folder an older version named after the API key (Behaviour P4) carries the key's
    /// letter case: it is looked for under that name, not under the case-safe name of the same
    /// string, and still renamed to the hashed name.
    @Test func p4_p10_anODPFolderNamedAfterAMixedCaseKeyByAnOlderVersionIsStillFound() async throws {
        let key = "KeyWithCase-\(UUID().uuidString.prefix(8))"
        let backend = SegmentsClient.Backend.odp(ODPConfiguration(apiKey: key), candidates: ["a"])
        let keyNamed = StorageLocation.defaultParentDirectory().appendingPathComponent("odp-\(key)", isDirectory: true)
        let current = StorageLocation.defaultDirectory(integrationId: backend.storageIntegrationId)
        defer {
            try? FileManager.default.removeItem(at: keyNamed)
            try? FileManager.default.removeItem(at: current)
        }
        try FileCustomerStore(directory: keyNamed, logger: RecordingLogger()).save(CustomerIds(cookie: "odp-customer-before-the-upgrade"))
        let storageQueue = DispatchQueue(label: "test.p10.storage")

        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: RecordingLogger()), transport: RecordingTransport(),
                storage: .directory(nil), storageQueue: storageQueue))
        try client.configure(.init(backend: backend, flushingMode: .manual))
        #expect(await eventually(timeout: 10) { client.customerCookie == "odp-customer-before-the-upgrade" }, "\(String(describing: client.customerCookie))")
        client.stop()
        #expect(await Self.settled(storageQueue), "the client's disk work ends before the folder is read and removed")

        #expect(!FileManager.default.fileExists(atPath: keyNamed.path), "the key-named folder is gone")
        #expect(FileCustomerStore(directory: current, logger: RecordingLogger()).load()?.cookie == "odp-customer-before-the-upgrade")
    }

    /// Behaviour P5 for the ODP folder named after the key (issue 23, item 11): while another owner
    /// holds its lock, `configure` leaves it where it is, says so at warning level without naming
    /// it (its name is the key), and the folder and its content stay the owner's.
    @Test func p5_p4_anODPFolderNamedAfterTheKeyThatAnotherOwnerHoldsIsLeftWhereItIs() async throws {
        let key = "KeyInUse-\(UUID().uuidString.prefix(8))"
        let backend = SegmentsClient.Backend.odp(ODPConfiguration(apiKey: key), candidates: ["a"])
        let keyNamed = StorageLocation.defaultParentDirectory().appendingPathComponent("odp-\(key)", isDirectory: true)
        let current = StorageLocation.defaultDirectory(integrationId: backend.storageIntegrationId)
        defer {
            try? FileManager.default.removeItem(at: keyNamed)
            try? FileManager.default.removeItem(at: current)
        }
        try FileCustomerStore(directory: keyNamed, logger: RecordingLogger()).save(CustomerIds(cookie: "the-other-owner's"))
        let held = try StorageDirectoryLock.acquire(keyNamed)
        let logger = RecordingLogger()
        let storageQueue = DispatchQueue(label: "test.p5.storage")

        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: logger), transport: RecordingTransport(),
                storage: .directory(nil), storageQueue: storageQueue))
        // Not `try`: the client is stopped and its queue drained on every path, so nothing it writes
        // late makes a folder again after the removal above.
        do { try client.configure(.init(backend: backend, flushingMode: .manual)) } catch { Issue.record("configure failed: \(error)") }
        let warned = await eventually(timeout: 10) {
            logger.entries.contains { $0.level == .warning && $0.message.contains("named after the API key is in use by another process") }
        }
        client.stop()
        #expect(await Self.settled(storageQueue), "the client's disk work ends before the folders are read and removed")

        #expect(warned, "\(logger.messages)")
        #expect(!logger.messages.contains { $0.contains(key) }, "no line names the key")
        #expect(FileManager.default.fileExists(atPath: keyNamed.path), "the owner's folder is not renamed")
        #expect(FileCustomerStore(directory: keyNamed, logger: RecordingLogger()).load()?.cookie == "the-other-owner's")
        withExtendedLifetime(held) {}
    }
}
