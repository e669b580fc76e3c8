import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The instance API over fakes, on virtual time.
@Suite(Hang.timeLimit(minutes: 2)) struct SegmentsClientTests {
    @Test func aConfiguredClientTracksIdentifiesAndReloadsAfterUploads() async throws {
        let harness = ClientHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        try harness.configure()
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .discovery()) { told.record($0) }
        try harness.client.trackEvent(properties: ["sku": "A-1"], timestamp: nil, eventType: "view_item")
        await harness.advance()
        #expect(harness.uploader.accepted.count == 1)
        await harness.advance(by: 5)
        #expect(told.all == [[Fixture.s1]])
        #expect(harness.repository.fetches.count == 1)  // the listener and the upload: one coalesced reload

        try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: ["plan": "gold"], timestamp: nil)
        await harness.advance(by: 5)
        let jane = CustomerIds(["cookie": harness.client.customerCookie!, "registered": "jane"])
        #expect(harness.uploader.accepted.last?.kind == .customerUpdate)
        #expect(harness.uploader.accepted.last?.customerIds == jane)
        #expect(harness.repository.calls.suffix(2) == [.link(jane), .fetch(jane)])
    }

    @Test func e1_workBeforeConfigureWaitsInMemory() async throws {
        let harness = ClientHarness()
        // Rev 4: kept in memory for the first configure (PreConfigureCallsTests), nothing queued yet.
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "x")
        try harness.client.identifyCustomer(customerIds: ["registered": "x"], properties: [:], timestamp: nil)
        #expect(harness.client.queuedEventCount == 0)
        #expect(await harness.client.countQueuedEvents() == 0)
        let flushed = await harness.client.flush()
        #expect(flushed.error?.code == .notConfigured)
        #expect(harness.client.customerCookie == nil)
        #expect(!harness.client.isConfigured)
    }

    @Test func anEmptyEventTypeIsRefused() async throws {
        let harness = ClientHarness()
        try harness.configure()
        #expect(throws: SegmentsError.self) {
            try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "")
        }
    }

    @Test func twoClientsInOneProcessShareNothing() async throws {
        let first = ClientHarness()
        let second = ClientHarness()
        first.repository.answer([.content(): [Fixture.s1]])
        second.repository.answer([.content(): [Fixture.s2]])
        try first.configure()
        try second.configure()
        #expect(first.client.customerCookie != second.client.customerCookie)
        let firstTold = Recorder<[Segment]>()
        first.client.addListener(category: .content(), includeFirstLoad: true) { firstTold.record($0) }
        await first.advance(by: 5)
        await second.advance(by: 5)
        #expect(firstTold.all == [[Fixture.s1]])
        #expect(second.repository.calls.isEmpty)
        let secondRead = try await readNow(second, .content())
        #expect(secondRead == [Fixture.s2])
    }

    /// A first run: one fetch of [s1], five events queued; then its files are copied to
    /// `directory`, as a process that ended would have left them (not one that stopped: stopping
    /// deletes the baseline). The next client there reads them from disk with new stores.
    func runFirstProcess(leavingFilesIn directory: TemporaryDirectory) async throws -> String? {
        let original = TemporaryDirectory()
        defer { original.remove() }
        let first = ClientHarness(storage: .directory(original.url))
        first.repository.answer([.discovery(): [Fixture.s1]])
        try first.configure(flushingMode: .manual)
        _ = try await readNow(first, .discovery())
        for index in 0..<5 {
            try first.client.trackEvent(properties: ["index": .int(index)], timestamp: nil, eventType: "view_item")
        }
        await drained(first.storageQueue)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: original.url.path) where name != "owner.lock" {
            try FileManager.default.copyItem(
                at: original.url.appendingPathComponent(name), to: directory.url.appendingPathComponent(name))
        }
        return first.client.customerCookie
    }

    @Test func e4_p2_aRestartOnTheSameDirectoryFindsTheCookieTheBaselineAndTheWholeQueue() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cookie = try await runFirstProcess(leavingFilesIn: directory)

        // The restart: new store instances on a folder the first client never used (its files were
        // copied there), so the second client holds only what was read back from the files.
        let after = FileStores(directory.url)
        let second = ClientHarness(storage: after.storage)
        try second.configure(flushingMode: .manual)
        #expect(second.client.customerCookie == cookie)
        #expect(await second.client.countQueuedEvents() == 5)
        let told = Recorder<[Segment]>()
        second.repository.answer([.discovery(): [Fixture.s1]])
        second.client.addListener(category: .discovery()) { told.record($0) }
        await second.advance(by: 5)
        #expect(told.count == 0)  // the restored baseline already holds [s1]: no change
        let result = await flushNow(second)
        #expect(try result.get() == 5)
        #expect(second.uploader.accepted.map { $0.properties["index"] } == (0..<5).map { .int($0) })
    }

    @Test func changingTheFlushingModeTakesEffectAtOnce() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .manual)
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        await harness.advance(by: 60)
        #expect(harness.uploader.accepted.isEmpty)
        harness.client.flushingMode = .immediate
        await harness.advance()
        #expect(harness.uploader.accepted.count == 1)
        #expect(harness.client.flushingMode == .immediate)
    }

    @Test func aChangeStreamDeliversChanges() async throws {
        let harness = ClientHarness()
        harness.repository.answer([.merchandising(): [Fixture.s2]])
        try harness.configure()
        var iterator = harness.client.changes(of: .merchandising(), includeFirstLoad: true).makeAsyncIterator()
        await harness.advance(by: 5)
        #expect(await iterator.next() == [Fixture.s2])
    }

    @Test func t2_d6_m4_aChangesStreamAsksForNoFirstLoadByDefault() async throws {
        let harness = ClientHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let stream = harness.client.changes(of: .discovery())  // registered before configure
        try harness.configure()
        await harness.advance(by: 5)
        #expect(harness.logger.messages.contains("Segments: Skipping initial segments update process as is not required"))
        #expect(harness.repository.fetches.isEmpty, "a listener without includeFirstLoad asks for no reload at configure")
        withExtendedLifetime(stream) {}
    }

    /// Reads with the async API while virtual time runs on another task.
    func readNow(_ harness: ClientHarness, _ category: SegmentCategory) async throws -> [Segment] {
        let result = await withCheckedContinuation { continuation in
            harness.client.getSegments(category: category) { continuation.resume(returning: $0) }
            Task { await harness.advance() }
        }
        return try result.get()
    }

    func flushNow(_ harness: ClientHarness) async -> SegmentsFlushResult {
        await withCheckedContinuation { continuation in
            harness.client.flush { continuation.resume(returning: $0) }
            Task { await harness.advance() }
        }
    }
}

extension Result where Failure == SegmentsError {
    var error: SegmentsError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension SegmentsClientTests {
    @Test func e2_aModeSetBeforeConfigureAppliesAtConfigureUnlessTheConfigurationNamesOne() async throws {
        let harness = ClientHarness()
        harness.client.flushingMode = .manual
        #expect(harness.client.flushingMode == .manual)
        try harness.client.configure(harness.customConfiguration)  // names no mode
        #expect(harness.client.flushingMode == .manual)
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "a")
        await harness.advance(by: 60)
        #expect(harness.uploader.accepted.isEmpty)

        let named = ClientHarness()
        named.client.flushingMode = .manual
        try named.configure(flushingMode: .immediate)  // names one: it wins
        #expect(named.client.flushingMode == .immediate)
    }
}

extension SegmentsClientTests {
    @Test func r3_configureKnowsTheCookieAtOnceAndServesCallsMadeDuringTheBackgroundLoadInOrder() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cookie = try await runFirstProcess(leavingFilesIn: directory)
        let second = ClientHarness(storage: .directory(directory.url))
        second.storageQueue.suspend()  // the baseline and the queue have not loaded yet
        try second.configure(flushingMode: .manual)
        #expect(second.client.customerCookie == cookie, "the customer file is read by configure itself")
        let reads = Recorder<Result<[Segment], SegmentsError>>()
        second.client.getSegments(category: .discovery()) { reads.record($0) }
        try second.client.trackEvent(properties: ["index": 5], timestamp: nil, eventType: "view_item")
        let flushed = Recorder<SegmentsFlushResult>()
        second.client.flush { flushed.record($0) }
        await second.scheduler.advance(by: 1)  // the cache (5 s) stays fresh
        await drained(second.deliveryQueue)
        #expect(reads.count == 0, "nothing is answered from a half-loaded state")
        #expect(flushed.count == 0 && second.uploader.attempts.isEmpty)

        second.storageQueue.resume()
        await second.advance()
        #expect(reads.all.map { try? $0.get() } == [[Fixture.s1]], "answered from the loaded baseline")
        #expect(second.repository.calls.isEmpty)
        #expect(flushed.all.map { try? $0.get() } == [6])
        #expect(second.uploader.accepted.map { $0.properties["index"] } == (0..<6).map { .int($0) })
    }
}

extension SegmentsClientTests {
    @Test func e6_theClientRefusesUnreplayableItemsAndKeepsTheIdsAsTheyWere() async throws {
        let harness = ClientHarness()
        try harness.configure(flushingMode: .manual)
        let event = #expect(throws: SegmentsError.self) {
            try harness.client.trackEvent(properties: ["price": .string(String(repeating: "x", count: 70_000))], timestamp: nil, eventType: "buy")
        }
        #expect(event?.code == .invalidConfiguration)
        let identify = #expect(throws: SegmentsError.self) {
            try harness.client.identifyCustomer(
                customerIds: ["registered": "jane"], properties: ["blob": .string(String(repeating: "x", count: 70_000))],
                timestamp: nil)
        }
        #expect(identify?.code == .invalidConfiguration)
        #expect(harness.client.customerIds?.values["registered"] == nil, "the ids merge only with a queued update")
        #expect(harness.client.queuedEventCount == 0)
    }
}

/// The engine at the facade: identify as one step.
@Suite(Hang.timeLimit(minutes: 2)) struct SegmentsClientConfigureOrderTests {
    /// Defect: identify merged and saved the ids, then failed to queue the update, leaving the ids
    /// merged without their update.
    @Test func e1_identifyThatCannotQueueItsUpdateChangesNothing() async throws {
        let events = RecordingEventQueueStore()
        let customers = RecordingCustomerStore()
        let harness = ClientHarness(
            storage: .custom(customer: customers, baseline: RecordingSegmentBaselineStore(), events: events))
        try harness.configure()
        harness.client.addListener(category: .discovery()) { _ in }
        await harness.advance(by: 5)
        let before = harness.client.customerIds
        let fetches = harness.repository.fetches.count
        events.failAppends(with: SegmentsError(.storage, "disk full"))

        #expect(throws: SegmentsError.self) {
            try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        }
        await harness.advance(by: 60)
        #expect(harness.client.customerIds == before)
        #expect(customers.load() == before)
        #expect(harness.repository.fetches.count == fetches)  // no reload for ids that never took

        events.failAppends(with: nil)
        try harness.client.identifyCustomer(customerIds: ["registered": "jane"], properties: [:], timestamp: nil)
        #expect(harness.client.customerIds?.values["registered"] == "jane")
        #expect(events.load().last?.customerIds.values["registered"] == "jane")
    }
}

/// Behaviour R4: the cheap calls cost the caller only in-memory work. Their figures (≤ 20 µs p50) are
/// in segments-bench 10; this proves what they must never wait for.
@Suite(Hang.timeLimit(minutes: 2)) struct CallersCostTests {
    @Test func r4_listenersCacheHitsAndTheCookieNeverWaitForTheStorageOrTheDeliveryQueue() async throws {
        let harness = ClientHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        try harness.configure(flushingMode: .manual)
        let warmUp = Recorder<Result<[Segment], SegmentsError>>()
        harness.client.getSegments(force: true, category: .discovery()) { warmUp.record($0) }
        await harness.advance()
        #expect(warmUp.count == 1)  // the cache is fresh now

        // Disk and delivery both stuck, as with a slow disk and a listener that blocks.
        harness.storageQueue.suspend()
        harness.deliveryQueue.suspend()
        let answers = Recorder<Result<[Segment], SegmentsError>>()
        let client = harness.client
        let cookie = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let token = client.addListener(category: .content()) { _ in }
            client.removeListener(token)
            client.getSegments(category: .discovery()) { answers.record($0) }
            cookie.withLock { $0 = client.customerCookie }
            done.signal()
        }
        // Generous: only a call that waits for one of the stuck queues takes this long.
        let returned = await onDedicatedThread { done.wait(timeout: .now() + Hang.scaled(30)) == .success }
        #expect(returned)
        #expect(cookie.value != nil)
        #expect(answers.count == 0)  // the answer waits for the delivery queue, not the caller
        harness.storageQueue.resume()
        harness.deliveryQueue.resume()
        await harness.advance()
        #expect(answers.all.map { try? $0.get() } == [[Fixture.s1]])
        #expect(harness.repository.fetches.count == 1)  // a cache hit, not a fetch
    }
}
