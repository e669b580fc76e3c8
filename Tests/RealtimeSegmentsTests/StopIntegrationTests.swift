import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import RealtimeSegments

/// `stopIntegration` as the Exponea SDK 4.x does it (A3 rev 4): one last flush, then the stored
/// data deleted; `stop(completion:)` for the data kept; `anonymize(completion:)` (A5). Virtual
/// time (`TestScheduler`), files in a temporary folder, completions on the main queue.
@Suite(Hang.timeLimit(minutes: 1)) struct StopIntegrationTests {
    static let unavailable = SegmentsError(.httpStatus, "unavailable", httpStatus: 503)

    /// What a completion saw when it ran.
    struct Call: Sendable {
        var onMainThread: Bool
        var note: String = ""
    }

    /// A harness on a temporary folder, configured with `uploader` in manual flushing (items wait).
    static func configured(
        _ folder: TemporaryDirectory, uploader: RecordingEventUploader? = nil
    ) throws -> (ClientHarness, RecordingEventUploader) {
        let harness = ClientHarness(storage: .directory(folder.url))
        let uploader = uploader ?? RecordingEventUploader(scheduler: harness.scheduler)
        try harness.client.configure(
            .init(backend: .custom(id: "test", repository: harness.repository, uploader: uploader), flushingMode: .manual))
        return (harness, uploader)
    }

    /// Runs what is due on virtual time now (no time passes unless `by`), the storage queue, and
    /// then the main queue, a few rounds: uploads, the deletion, the completion.
    static func settle(_ harness: ClientHarness, by seconds: TimeInterval = 0) async {
        for _ in 0..<6 {
            await harness.advance()
            await drained(harness.storageQueue)
            await mainQueueTurn()
        }
        if seconds > 0 {
            await harness.advance(by: seconds)
            for _ in 0..<6 {
                await harness.advance()
                await drained(harness.storageQueue)
                await mainQueueTurn()
            }
        }
    }

    /// Whether the caller runs on the main queue (told by a key the main queue carries: on Linux
    /// the main queue's blocks need not run on the process's first thread).
    static var onMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueueKey) == true }
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    init() {
        _ = Self.mainQueueKey
    }

    static func mainQueueTurn() async {
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
    }

    static func exists(_ name: String, in folder: TemporaryDirectory) -> Bool {
        FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(name).path)
    }

    static func text(_ name: String, in folder: TemporaryDirectory) -> String {
        (try? String(contentsOf: folder.url.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    static let storedFiles = ["customer.json", "segment-baseline.json", "event-queue.journal"]

    // MARK: - Flush, then delete

    @Test func a3_stopIntegrationUploadsWhatIsQueuedOldestFirstThenDeletesEveryStoredFile() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, uploader) = try Self.configured(folder)
        harness.client.addListener(category: .content(), includeFirstLoad: true) { _ in }
        for type in ["a", "b", "c"] { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
        try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        await Self.settle(harness, by: 10)  // the first load's reload (debounced) saves a baseline
        #expect(uploader.attempts.isEmpty, "manual flushing: nothing went up before the stop")
        #expect(Self.storedFiles.allSatisfy { Self.exists($0, in: folder) }, "the customer, the baseline and the queue are stored")

        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }
        // At once, for the app (A3): not configured, listeners gone, work refused.
        #expect(!harness.client.isConfigured)
        #expect(harness.client.listenerCount == 0)
        #expect(throws: SegmentsError.self) { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "late") }

        await Self.settle(harness)
        let names = uploader.accepted.map { event -> String in
            if case .event(let type) = event.kind { type } else { "customer" }
        }
        #expect(names == ["a", "b", "c", "customer"], "one request per item, oldest first, all before the deletion")
        #expect(uploader.attempts.count == 4)
        for name in Self.storedFiles { #expect(!Self.exists(name, in: folder), "\(name) is deleted") }
        #expect(calls.count == 1)
        #expect(calls.all.first?.onMainThread == true, "the completion runs on the main queue")
        #expect(!harness.logger.messages.contains { $0.contains("failed") }, "\(harness.logger.messages)")
    }

    /// A transient failure (503) and a permanent one (400) alike end the last flush.
    @Test(arguments: [503, 400])
    func a3_anUploadFailingDuringTheStopEndsTheFlushAndTheRestIsDeletedWithoutWaitingOutABackoff(status: Int) async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let failing = Locked<RecordingEventUploader?>(nil)
        let harness = ClientHarness(storage: .directory(folder.url))
        // The first item goes up; the second fails (503, transient): the rest must not wait.
        let uploader = RecordingEventUploader(scheduler: harness.scheduler) { _ in
            failing.value?.failNextUploads(1, with: SegmentsError(.httpStatus, "refused", httpStatus: status))
        }
        failing.withLock { $0 = uploader }
        try harness.client.configure(
            .init(backend: .custom(id: "test", repository: harness.repository, uploader: uploader), flushingMode: .manual))
        for type in ["a", "b", "c", "d"] { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
        await Self.settle(harness)

        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(harness)  // no virtual time passes: a backoff would never end

        #expect(uploader.accepted.count == 1, "a went up")
        #expect(uploader.attempts.count == 2, "b failed; the flush ended there: c and d were not tried")
        #expect(calls.count == 1, "the stop completed without waiting out a backoff")
        #expect(!Self.exists("event-queue.journal", in: folder), "b, c and d were deleted with the rest")
        #expect(!Self.exists("customer.json", in: folder))

        // Nothing of the old queue comes back: a new configuration on the folder has nothing to upload.
        try harness.client.configure(harness.customConfiguration)
        await Self.settle(harness, by: 120)
        #expect(uploader.attempts.count == 2)
        #expect(harness.uploader.attempts.isEmpty)
    }

    @Test func a3_aBackoffPendingAtTheStopIsNotWaitedOut() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let harness = ClientHarness(storage: .directory(folder.url))
        try harness.configure(flushingMode: .immediate)
        harness.uploader.failNextUploads(1, with: Self.unavailable)
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        await Self.settle(harness)
        #expect(harness.uploader.attempts.count == 1, "the upload failed: a backoff of seconds is pending")
        #expect(harness.uploader.accepted.isEmpty)

        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(harness)  // no virtual time passes

        #expect(harness.uploader.accepted.count == 1, "the last flush went ahead at once")
        #expect(calls.count == 1)
        #expect(!Self.exists("event-queue.journal", in: folder))
    }

    // MARK: - Before configure

    @Test func a3_stopIntegrationBeforeAnyConfigureDeletesTheStoredDataWithoutUploadingIt() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (earlier, _) = try Self.configured(folder)
        let oldCookie = try #require(earlier.client.customerCookie)
        try earlier.client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        let stopped = Recorder<Call>()
        earlier.client.stop { stopped.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(earlier)
        #expect(stopped.count == 1)
        #expect(Self.text("customer.json", in: folder).contains(oldCookie), "the earlier run's customer is stored")
        #expect(Self.exists("event-queue.journal", in: folder))

        // The next launch: "forget this customer" before configuring.
        let harness = ClientHarness(storage: .directory(folder.url))
        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(harness)
        #expect(calls.count == 1)
        #expect(calls.all.first?.onMainThread == true)
        for name in Self.storedFiles { #expect(!Self.exists(name, in: folder), "\(name) is deleted") }
        #expect(harness.uploader.attempts.isEmpty, "nothing was uploaded")

        try harness.configure()
        #expect(harness.client.customerCookie != oldCookie, "a new customer")
    }

    // MARK: - The next configure

    @Test func a3_aConfigureMadeInTheCompletionWorksAndStartsANewCustomer() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, _) = try Self.configured(folder)
        try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        let oldCookie = try #require(harness.client.customerCookie)
        await Self.settle(harness)

        let configuredAgain = Recorder<CustomerIds?>()
        let client = harness.client
        let configuration = harness.customConfiguration
        harness.client.stopAndDeleteData {
            try? client.configure(configuration)
            configuredAgain.record(client.customerIds)
        }
        await Self.settle(harness)

        let customer = try #require(configuredAgain.all.first ?? nil, "configured from the completion")
        #expect(harness.client.isConfigured)
        #expect(customer.cookie != oldCookie, "a new cookie")
        #expect(!customer.hasHardIds, "no hard ids")
        #expect(Self.text("customer.json", in: folder).contains(customer.cookie ?? "-"), "the new customer is saved")
    }

    @Test func a3_aConfigureBeforeTheDeletionIsDoneReadsNeitherTheOldCustomerNorTheOldQueue() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, uploader) = try Self.configured(folder)
        uploader.delay = 10  // the last flush is still uploading when the app configures again
        for type in ["a", "b", "c"] { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
        try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        let oldCookie = try #require(harness.client.customerCookie)
        await Self.settle(harness)

        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(harness)
        #expect(calls.count == 0, "the last flush is still uploading")

        try harness.configure(flushingMode: .immediate)
        let customer = try #require(harness.client.customerIds)
        #expect(customer.cookie != oldCookie, "the old customer, whose deletion is still to come, was not read")
        #expect(!customer.hasHardIds)
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "new")
        await Self.settle(harness, by: 30)

        #expect(calls.count == 1, "the deletion came first; the stop completed")
        let old = Set(uploader.attempts.map(\.id))
        #expect(old.count == uploader.attempts.count, "no old item was tried twice")
        #expect(uploader.attempts.count == 1, "the upload in flight finished; the rest of the flush was cut short")
        let newNames = harness.uploader.accepted.map { event -> String in
            if case .event(let type) = event.kind { type } else { "customer" }
        }
        #expect(newNames == ["new"], "the new configuration uploads only its own item")
        #expect(Self.text("customer.json", in: folder).contains(customer.cookie ?? "-"), "the new customer is saved after the deletion")
    }

    /// P5: another client of the process configuring on the folder right after the stop starts a
    /// new customer and never sees the old data, however the deletion and its configure interleave.
    @Test func a3_p5_anotherClientConfiguringOnTheFolderStartsANewCustomerOnAnEmptyFolder() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, uploader) = try Self.configured(folder)
        uploader.delay = 10
        for type in ["a", "b"] { try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: type) }
        try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        let oldCookie = try #require(harness.client.customerCookie)
        await Self.settle(harness)
        let calls = Recorder<Call>()
        harness.client.stopAndDeleteData { calls.record(Call(onMainThread: Self.onMainQueue)) }

        let other = ClientHarness(storage: .directory(folder.url))
        try other.configure(flushingMode: .immediate)  // while the last flush still uploads
        let customer = try #require(other.client.customerIds)
        #expect(customer.cookie != oldCookie)
        #expect(!customer.hasHardIds)
        await Self.settle(harness, by: 60)
        await Self.settle(other)

        #expect(calls.count == 1)
        #expect(other.uploader.attempts.isEmpty, "the other client uploads nothing of the old queue")
        #expect(await other.client.countQueuedEvents() == 0)
        #expect(Self.text("customer.json", in: folder).contains(customer.cookie ?? "-"))
        #expect(!Self.text("customer.json", in: folder).contains(oldCookie))
        other.client.stop()
    }

    // MARK: - Completions

    @Test func a3_stopKeepingTheDataCompletesOnTheMainQueueAfterItsLastDiskWrite() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, _) = try Self.configured(folder)
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "kept")
        let cookie = try #require(harness.client.customerCookie)
        await Self.settle(harness)

        let gate = DispatchSemaphore(value: 0)
        harness.storageQueue.async { gate.wait() }  // a slow disk: the stop's writes wait behind it
        let calls = Recorder<Call>()
        harness.client.stop {
            // The stop's own write (the emptied baseline) is done by now.
            let baseline = Self.text("segment-baseline.json", in: folder)
            calls.record(Call(onMainThread: Self.onMainQueue, note: baseline))
        }
        await Self.mainQueueTurn()
        #expect(calls.count == 0, "the stop's disk work is not done")
        gate.signal()
        await Self.settle(harness)

        #expect(calls.count == 1)
        #expect(calls.all.first?.onMainThread == true)
        #expect(Self.text("customer.json", in: folder).contains(cookie), "the data is kept")
        #expect(Self.exists("event-queue.journal", in: folder))
    }

    @Test func a5_anonymizeCompletesOnTheMainQueueOnceTheNewCustomerIsSaved() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, _) = try Self.configured(folder)
        await Self.settle(harness)

        let gate = DispatchSemaphore(value: 0)
        harness.storageQueue.async { gate.wait() }
        let calls = Recorder<Call>()
        harness.client.anonymize {
            calls.record(Call(onMainThread: Self.onMainQueue, note: Self.text("customer.json", in: folder)))
        }
        let cookie = try #require(harness.client.customerCookie)
        await Self.mainQueueTurn()
        #expect(calls.count == 0, "the new customer is not saved yet")
        gate.signal()
        await Self.settle(harness)

        #expect(calls.count == 1)
        #expect(calls.all.first?.onMainThread == true)
        #expect(calls.all.first?.note.contains(cookie) == true, "the file held the new customer when the completion ran")
    }

    @Test func a3_a5_theExponeaFormsCallBackOnTheMainQueue() async throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (harness, uploader) = try Self.configured(folder)
        let exponea = Exponea(client: harness.client)
        exponea.trackEvent(properties: ["price": 1], timestamp: nil, eventType: "purchase")
        let oldCookie = try #require(exponea.customerCookie)
        await Self.settle(harness)

        let anonymized = Recorder<Call>()
        exponea.anonymize { anonymized.record(Call(onMainThread: Self.onMainQueue)) }
        await Self.settle(harness)
        #expect(anonymized.all.map(\.onMainThread) == [true])

        let stopped = Recorder<Call>()
        exponea.stopIntegration { stopped.record(Call(onMainThread: Self.onMainQueue)) }
        #expect(!exponea.isConfigured)
        await Self.settle(harness)
        #expect(stopped.all.map(\.onMainThread) == [true])
        #expect(uploader.accepted.count == 1, "the queued event went up before the deletion")
        for name in Self.storedFiles { #expect(!Self.exists(name, in: folder), "\(name) is deleted") }
        #expect(exponea.customerCookie == nil)
        _ = oldCookie
    }
}
