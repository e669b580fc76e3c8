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

/// A launch before the device's first unlock (see Behaviour P8), imposed on Linux: every `open`
/// under the client's folder fails with `EACCES` (the customer file, the queue file, the owner
/// lock) until the test lets the folder recover and signals that protected data is available.
@Suite(Hang.timeLimit(minutes: 2)) struct ProtectedDataEndToEndTests {
    let directory = TemporaryDirectory()
    let storedCustomer = CustomerIds(cookie: "stored-before-the-restart")
    let storageQueue = DispatchQueue(label: "p8-tests.storage")
    let signal = ManualProtectedDataAvailability()
    let logger = RecordingLogger()

    /// What the previous run left: its customer and one queued event.
    func previousRun() throws {
        try PreviousRun.write(customer: storedCustomer, to: directory.url, logger: logger)
    }

    func client() -> SegmentsClient {
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(scheduler: TestScheduler(), logger: logger), storage: .directory(directory.url),
            storageQueue: storageQueue)
        options.protectedData = signal
        return SegmentsClient(options: options)
    }

    var configuration: SegmentsClient.Configuration {
        .init(
            backend: .custom(id: "p8", repository: RecordingSegmentRepository(), uploader: RecordingEventUploader()),
            flushingMode: .manual)
    }

    func whileProtected<Result>(_ body: () throws -> Result) rethrows -> Result {
        try FileOperationLog.failing(
            [InjectedFileFault(.open, errno: EACCES, times: 100_000)], under: directory.url.path, body)
    }

    func text(_ name: String) -> String {
        (try? String(contentsOf: directory.url.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    var setAside: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).filter { $0.contains(".corrupt-") }
    }

    @Test func p8_aLaunchBeforeTheFirstUnlockConfiguresThenAdoptsTheStoredCustomerAndKeepsEveryEvent() async throws {
        defer { directory.remove() }
        try previousRun()
        let client = client()

        try whileProtected {
            try client.configure(configuration)
            try client.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "while-locked")
            drained(storageQueue)  // the refused loads and saves ran
        }

        #expect(client.isConfigured)
        #expect(client.customerCookie != nil && client.customerCookie != storedCustomer.cookie)
        #expect(text("customer.json").contains(storedCustomer.cookie!), "the stored customer was neither deleted nor replaced")
        #expect(!text("event-queue.journal").contains("while-locked"), "not written while refused")
        #expect(setAside.isEmpty)

        signal.signalAvailable()
        await drained(storageQueue)

        #expect(client.customerCookie == storedCustomer.cookie, "the stored customer is adopted")
        #expect(
            logger.count(
                of:
                    "Segments: The stored customer could be read once protected data became available; it replaces the customer made while it could not be read"
            ) == 1)
        #expect(logger.messages.contains { $0.hasPrefix("Tracking: The stored customer ids (customer.json) cannot be read until protected data is available") })
        #expect(text("customer.json").contains(storedCustomer.cookie!))
        let journal = text("event-queue.journal")
        #expect(journal.contains("before-the-restart") && journal.contains("while-locked"))
        #expect(await client.countQueuedEvents() == 2)
        #expect(setAside.isEmpty)
        #expect(throws: SegmentsError.self, "the owner lock is held again") {
            try StorageDirectoryLock.acquire(directory.url)
        }
    }

    @Test func p8_r1_theSignalOnlyQueuesTheRetryOnTheStorageQueue() throws {
        defer { directory.remove() }
        try previousRun()
        let client = client()
        try whileProtected {
            try client.configure(configuration)
            drained(storageQueue)
        }
        let gate = DispatchSemaphore(value: 0)
        storageQueue.async { gate.wait() }  // the storage queue is busy

        let (_, counts) = FileOperationLog.counting(under: directory.url.path) { signal.signalAvailable() }

        #expect(counts.opens == 0 && counts.reads == 0 && counts.writes == 0, "the signalling thread touched no file")
        #expect(client.customerCookie != storedCustomer.cookie, "nothing is redone before the storage queue runs it")
        gate.signal()
        drained(storageQueue)
        #expect(client.customerCookie == storedCustomer.cookie)
        #expect(signal.observerCount == 1)
    }

    @Test func p8_anIdentifyBeforeTheFirstUnlockIsKeptAndSavedOverTheStoredCustomer() throws {
        defer { directory.remove() }
        try previousRun()
        let client = client()

        try whileProtected {
            try client.configure(configuration)
            try client.identifyCustomer(customerIds: ["registered": "jane@example.com"], properties: [:], timestamp: nil)
            drained(storageQueue)
        }
        let identified = try #require(client.customerIds)
        #expect(text("customer.json").contains(storedCustomer.cookie!))

        signal.signalAvailable()
        drained(storageQueue)
        drained(storageQueue)  // the save the engine queued after reading the stored customer

        #expect(client.customerIds == identified, "the customer decided meanwhile stays")
        #expect(text("customer.json").contains("jane@example.com"))
        #expect(!text("customer.json").contains(storedCustomer.cookie!))
    }
    /// Issue 32 finding 17 (C4, P8): a client launched before the first unlock links its customer
    /// once protected data is available; the next client on the folder fetches with the link it
    /// finds stored, and links nothing again. The baseline file refused at the load stayed unread
    /// after the retry, so the link memory was kept in memory only.
    @Test func c4_p8_aLinkMadeAfterTheFirstUnlockIsRememberedForTheNextClientOnTheFolder() async throws {
        defer { directory.remove() }
        let scheduler = TestScheduler()
        let repository = RecordingSegmentRepository()
        func client() -> SegmentsClient {
            var options = SegmentsClient.Options(
                runtime: SegmentsRuntime(scheduler: scheduler, logger: logger), storage: .directory(directory.url),
                storageQueue: storageQueue)
            options.protectedData = signal
            return SegmentsClient(options: options)
        }
        let configuration = SegmentsClient.Configuration(
            backend: .custom(id: "p8", repository: repository, uploader: RecordingEventUploader()), flushingMode: .manual)
        /// A forced read of discovery, its fetch run on virtual time.
        func read(_ client: SegmentsClient) async {
            let answers = Recorder<Result<[Segment], SegmentsError>>()
            client.getSegments(force: true, category: .discovery()) { answers.record($0) }
            await drained(storageQueue)  // the baseline is in
            await scheduler.advance()
            await drained(storageQueue)
            #expect(answers.all.count == 1)
            #expect((try? answers.all.first?.get()) != nil, "the read was answered with segments")
        }

        var first: SegmentsClient? = client()
        try whileProtected {
            try first?.configure(configuration)
            drained(storageQueue)  // the refused loads ran
        }
        signal.signalAvailable()
        await drained(storageQueue)  // the retry ran
        try first?.identifyCustomer(customerIds: ["registered": "u2"], properties: [:], timestamp: nil)
        await read(try #require(first))
        #expect(repository.links.count == 1, "linked once protected data was available")
        first = nil  // let go of without stop: its stored data stays
        await drained(storageQueue)

        let next = client()
        try next.configure(configuration)
        await read(next)
        #expect(repository.links.count == 1, "the stored link memory is used: nothing is linked again")
        #expect(repository.fetches.count == 2)
        #expect(repository.fetches.last?.values["registered"] == "u2")
    }
}
