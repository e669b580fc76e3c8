import Foundation
import RealtimeSegments
@testable import SegmentsPersistence
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 31, finding 3 (Behaviour P8, rev 4): a permission refusal (`EACCES`/`EPERM`) was taken for
/// "protected data not available yet" on every platform, and nothing outside iOS ever reported it
/// available, so the state was permanent: a lock file of mode 000 let `configure` succeed without
/// the lock (two processes then tracked into one journal), a queue file of mode 000 made
/// `trackEvent` keep events in memory only (gone after a restart), a read-only folder accepted
/// everything and wrote nothing, and the log lines spoke of the device's first unlock on Linux.
///
/// Only a refusal while the platform reports protected data unavailable is transient now. The
/// refusals come from the fault seam (these tests run as root, which ignores permission bits);
/// the `realPermissions` tests repeat the cases with real modes and skip themselves only under
/// root.
@Suite(Hang.timeLimit(minutes: 2)) struct PermissionRefusalEndToEndTests {
    let directory = TemporaryDirectory()
    let storedCustomer = CustomerIds(cookie: "stored-by-the-previous-run")
    let storageQueue = DispatchQueue(label: "p8-permission-tests.storage")
    let logger = RecordingLogger()

    /// What the previous run left: its customer and one queued event.
    func previousRun() throws {
        try PreviousRun.write(customer: storedCustomer, to: directory.url, logger: logger)
    }

    /// A client on the folder; its protected-data port is the live one (on Linux and macOS it
    /// reports protected data always available) unless `protectedData` is given.
    func client(protectedData: (any ProtectedDataAvailability)? = nil, storageQueue: DispatchQueue? = nil) -> SegmentsClient {
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: logger), storage: .directory(directory.url),
            storageQueue: storageQueue ?? self.storageQueue)
        if let protectedData { options.protectedData = protectedData }
        return SegmentsClient(options: options)
    }

    var configuration: SegmentsClient.Configuration {
        .init(
            backend: .custom(id: "p8", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual)
    }

    /// Runs `body` while every `open` of `name` in the folder (of every file in it, when `nil`)
    /// fails with `code`.
    func refusing<Result>(_ name: String? = nil, errno code: Int32 = EACCES, _ body: () throws -> Result) rethrows -> Result {
        let path = name.map { directory.url.appendingPathComponent($0).path } ?? directory.url.path
        return try FileOperationLog.failing([InjectedFileFault(.open, errno: code, times: 100_000)], under: path, body)
    }

    func text(_ name: String) -> String {
        (try? String(contentsOf: directory.url.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    /// No line says that the device's first unlock, or protected data, is waited for.
    var saysNothingOfAFirstUnlock: Bool {
        !logger.messages.contains { $0.contains("first unlock") || $0.contains("until protected data") }
    }

    /// The events a new client of the folder finds queued: what survived the restart.
    func queuedAfterARestart() async throws -> Int {
        let restarted = client()
        try restarted.configure(configuration)
        defer { restarted.stop() }
        return await restarted.countQueuedEvents()
    }

    // MARK: - (a) The owner lock

    @Test(arguments: [false, true])
    func p8_p5_aRefusedLockFileFailsConfigureWithAStorageErrorNamingOwnerLock(manualPort: Bool) throws {
        defer { directory.remove() }
        try previousRun()
        let client = client(protectedData: manualPort ? ManualProtectedDataAvailability(isAvailable: true) : nil)

        let error = try #require(throws: SegmentsError.self) { try refusing("owner.lock") { try client.configure(configuration) } }

        #expect(error.code == .storage)
        #expect(error.message.contains("owner.lock"))
        #expect(!client.isConfigured, "no configure without the lock")
        // Still before the first configure: the call waits in memory for it (E1 rev 4), nothing is queued.
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "waits")
        #expect(client.queuedEventCount == 0)
        #expect(saysNothingOfAFirstUnlock)
        #expect(text("customer.json").contains(storedCustomer.cookie!))
    }

    // MARK: - (b) The event queue

    @Test func p8_aRefusedQueueFileMakesTrackingRefuseAndNoAcceptedEventIsLostAcrossARestart() async throws {
        defer { directory.remove() }
        try previousRun()
        let client = client()
        var accepted = 0

        try refusing("event-queue.journal") {
            try client.configure(configuration)
            drained(storageQueue)  // the queue's load ran, and was refused
            for index in 0..<3 {
                do {
                    try client.trackEvent(properties: ["n": .int(index)], timestamp: nil, eventType: "while-refused")
                    accepted += 1
                } catch let error as SegmentsError {
                    #expect(error.code == .storage)
                    #expect(error.message.contains("event-queue.journal"))
                }
            }
            drained(storageQueue)
        }
        #expect(accepted == 0, "tracking refuses: nothing is kept in memory only")
        #expect(saysNothingOfAFirstUnlock)
        #expect(logger.messages.contains { $0.contains("Could not open the event queue") })

        try client.trackEvent(properties: [:], timestamp: nil, eventType: "after-the-fix")
        client.stop()
        await drained(storageQueue)

        let journal = text("event-queue.journal")
        #expect(journal.contains("before-the-restart") && journal.contains("after-the-fix"))
        #expect(!journal.contains("while-refused"))
        #expect(try await queuedAfterARestart() == 2, "every accepted event is still queued")
    }

    // MARK: - (c) A folder that refuses every file (read-only)

    @Test func p8_aFolderThatRefusesEveryFileFailsConfigure() throws {
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let client = client()

        let error = try #require(throws: SegmentsError.self) { try refusing { try client.configure(configuration) } }

        #expect(error.code == .storage)
        #expect(error.message.contains("owner.lock"))
        #expect(!client.isConfigured)
        #expect(saysNothingOfAFirstUnlock)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).isEmpty)
    }

    // MARK: - The customer file

    @Test func p8_aRefusedCustomerFileFailsConfigureAndLeavesTheFolderFree() throws {
        defer { directory.remove() }
        try previousRun()
        let client = client()

        let error = try #require(throws: SegmentsError.self) { try refusing("customer.json") { try client.configure(configuration) } }

        #expect(error.code == .storage)
        #expect(error.message.contains("customer.json"))
        #expect(!client.isConfigured, "no customer made beside one that cannot be read")
        #expect(saysNothingOfAFirstUnlock)
        #expect(text("customer.json").contains(storedCustomer.cookie!))
        // The claim was undone: the lock is free, and another client of the process is not handed
        // the folder as if this one had used it (it reads, and is refused, the file itself).
        withExtendedLifetime(try StorageDirectoryLock.acquire(directory.url)) {}
        let another = self.client(storageQueue: DispatchQueue(label: "p8-permission-tests.another"))
        #expect(throws: SegmentsError.self) { try refusing("customer.json") { try another.configure(configuration) } }

        try client.configure(configuration)
        #expect(client.customerCookie == storedCustomer.cookie)
        client.stop()
    }

    // MARK: - (d) The same refusals while protected data is unavailable stay transient

    @Test(arguments: ["owner.lock", "event-queue.journal", "customer.json"])
    func p8_theSameRefusalWhileProtectedDataIsUnavailableIsStillTransient(file: String) async throws {
        defer { directory.remove() }
        try previousRun()
        let signal = ManualProtectedDataAvailability()  // unavailable: before the first unlock
        let client = client(protectedData: signal)

        try refusing(file) {
            try client.configure(configuration)
            try client.trackEvent(properties: [:], timestamp: nil, eventType: "while-locked")
            drained(storageQueue)
        }
        #expect(client.isConfigured)
        #expect(logger.messages.contains { $0.contains("until protected data is available") } || file == "owner.lock")

        signal.signalAvailable()
        await drained(storageQueue)
        #expect(throws: SegmentsError.self, "the owner lock is held") { try StorageDirectoryLock.acquire(directory.url) }
        client.stop()
        await drained(storageQueue)
        let journal = text("event-queue.journal")
        #expect(journal.contains("before-the-restart") && journal.contains("while-locked"))
    }

    /// The retry after the first unlock takes the owner lock before anything else: when another
    /// process took the folder meanwhile, nothing kept in memory is written into its files (P5).
    @Test func p5_p8_aRetryFindingTheFolderTakenByAnotherProcessWritesNothingThere() async throws {
        defer { directory.remove() }
        try previousRun()
        let signal = ManualProtectedDataAvailability()
        let client = client(protectedData: signal)
        try refusing {
            try client.configure(configuration)
            try client.trackEvent(properties: [:], timestamp: nil, eventType: "while-locked")
            drained(storageQueue)
        }
        let journal = text("event-queue.journal")
        let otherProcess = try StorageDirectoryLock.acquire(directory.url)

        signal.signalAvailable()
        await drained(storageQueue)

        #expect(text("event-queue.journal") == journal, "nothing written into the other process's queue")
        #expect(text("customer.json").contains(storedCustomer.cookie!))
        #expect(logger.messages.contains { $0.contains("in use by another process") && $0.contains("left as they are") })
        withExtendedLifetime(otherProcess) {}
        client.stop()
    }

    // MARK: - Real permission bits (skipped under root, which ignores them)

    @Test(.enabled(if: geteuid() != 0, "root ignores permission bits; the fault-seam tests above cover this as root"))
    func p8_p5_realPermissions_aLockFileOfMode000FailsConfigure() throws {
        defer { directory.remove() }
        try previousRun()
        withExtendedLifetime(try StorageDirectoryLock.acquire(directory.url)) {}
        #expect(chmod(directory.url.appendingPathComponent("owner.lock").path, 0) == 0)
        let client = client()
        let error = #expect(throws: SegmentsError.self) { try client.configure(configuration) }
        #expect(error?.message.contains("owner.lock") == true)
        #expect(saysNothingOfAFirstUnlock)
    }

    @Test(.enabled(if: geteuid() != 0, "root ignores permission bits; the fault-seam tests above cover this as root"))
    func p8_realPermissions_aQueueFileOfMode000MakesTrackingRefuse() throws {
        defer { directory.remove() }
        try previousRun()
        #expect(chmod(directory.url.appendingPathComponent("event-queue.journal").path, 0) == 0)
        let client = client()
        try client.configure(configuration)
        defer { client.stop() }
        #expect(throws: SegmentsError.self) { try client.trackEvent(properties: [:], timestamp: nil, eventType: "refused") }
        #expect(saysNothingOfAFirstUnlock)
    }

    @Test(.enabled(if: geteuid() != 0, "root ignores permission bits; the fault-seam tests above cover this as root"))
    func p8_realPermissions_aReadOnlyFolderFailsConfigure() throws {
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        #expect(chmod(directory.url.path, 0o500) == 0)
        defer { _ = chmod(directory.url.path, 0o700) }
        let client = client()
        let error = #expect(throws: SegmentsError.self) { try client.configure(configuration) }
        #expect(error?.message.contains("owner.lock") == true)
    }
}
