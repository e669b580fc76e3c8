import Foundation
import RealtimeSegments
import SegmentsTesting
import Testing

/// The instance API over fakes, on virtual time.
@Suite(hangTimeLimit(minutes: 2)) struct SegmentsClientTests {
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

    @Test func workBeforeConfigureIsRefusedOrWaits() async throws {
        let harness = ClientHarness()
        #expect(throws: SegmentsError.self) {
            try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "x")
        }
        #expect(throws: SegmentsError.self) {
            try harness.client.identifyCustomer(customerIds: ["registered": "x"], properties: [:], timestamp: nil)
        }
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

    @Test func e4_p2_aRestartOnTheSameDirectoryFindsTheCookieTheBaselineAndTheWholeQueue() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let before = FileStores(directory.url)
        let first = ClientHarness(storage: before.storage)
        first.repository.answer([.discovery(): [Fixture.s1]])
        try first.configure(flushingMode: .manual)
        _ = try await readNow(first, .discovery())
        for index in 0..<5 {
            try first.client.trackEvent(properties: ["index": .int(index)], timestamp: nil, eventType: "view_item")
        }
        let cookie = first.client.customerCookie
        #expect(await FileStores.settled(directory.url, cookie: cookie, withBaseline: true))

        // The restart: new store instances on the folder, so the second client holds only what
        // was read back from the files.
        let after = FileStores(directory.url)
        #expect(after.shareNoInstance(with: before))
        let second = ClientHarness(storage: after.storage)
        try second.configure(flushingMode: .manual)
        #expect(second.client.customerCookie == cookie)
        #expect(second.client.queuedEventCount == 5)
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

    /// Reads with the async API while virtual time runs on another task.
    func readNow(_ harness: ClientHarness, _ category: SegmentCategory) async throws -> [Segment] {
        let result = await withCheckedContinuation { continuation in
            harness.client.getSegments(category: category) { continuation.resume(returning: $0) }
            Task { await harness.advance() }
        }
        return try result.get()
    }

    func flushNow(_ harness: ClientHarness) async -> FlushResult {
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
    @Test func aFlushingModeSetBeforeConfigureIsReportedNotSilentlyLost() async throws {
        let harness = ClientHarness()
        harness.client.flushingMode = .manual
        #expect(harness.logger.entries.contains { $0.level == .warning && $0.message.contains("set before configure") })
        #expect(harness.client.flushingMode == .immediate)
    }
}
