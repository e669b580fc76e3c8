import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// The tracking pipeline on virtual time (Behaviour E, and the hook of T3).
@Suite(Hang.timeLimit(minutes: 2)) struct TrackingPipelineTests {
    final class Harness: Sendable {
        let scheduler = TestScheduler()
        let logger = RecordingLogger()
        /// The pipeline's queue, unless the test passed its own store.
        let store: RecordingEventQueueStore
        let uploader: RecordingEventUploader
        let uploads = Recorder<Int>()
        let storageQueue = DispatchQueue(label: "test.storage")
        let pipeline: TrackingPipeline

        /// A pipeline whose stored queue has loaded (unless `suspendStorage`: then the test resumes
        /// `storageQueue` itself), over `store` when given (else a recording store of `queued`).
        init(
            mode: FlushingMode = .immediate, queued: [TrackedEvent] = [], uploader: RecordingEventUploader? = nil,
            capacity: Int = TrackingPipeline.defaultCapacity, suspendStorage: Bool = false,
            store: (any EventQueueStore)? = nil
        ) {
            self.store = RecordingEventQueueStore(queued)
            self.uploader = uploader ?? RecordingEventUploader(scheduler: scheduler)
            let uploads = self.uploads
            if suspendStorage { storageQueue.suspend() }
            pipeline = TrackingPipeline(
                dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger, random: { 0.5 }), storageQueue: storageQueue), capacity: capacity),
                store: store ?? self.store, uploader: self.uploader, mode: mode, onItemUploaded: { uploads.record(1) })
            if !suspendStorage { drained(storageQueue) }
        }

        /// Waits until the storage queue has run everything queued on it so far.
        func settle() {
            drained(storageQueue)
        }

        func track(_ type: String, customer: CustomerIds = Fixture.customerA, properties: [String: JSONValue] = [:]) {
            _ = try? pipeline.track(eventType: type, properties: properties, timestamp: nil, customer: customer)
        }

        var uploadedTypes: [String] {
            uploader.accepted.map { if case .event(let type) = $0.kind { type } else { "customer" } }
        }
    }

    @Test func e1_itemsAreQueuedDurablyWithTheCustomerIdsOfTheirMoment() async throws {
        let harness = Harness(mode: .manual)
        let jane = CustomerIds(["cookie": "c", "registered": "jane"])
        harness.track("view_item", customer: Fixture.customerA, properties: ["sku": "A-1", "price": 9.99])
        try harness.pipeline.trackCustomerUpdate(properties: ["plan": "gold"], timestamp: nil, customer: jane)
        let stored = harness.store.load()
        #expect(stored.map(\.customerIds) == [Fixture.customerA, jane])
        #expect(stored.map(\.kind) == [.event(type: "view_item"), .customerUpdate])
        #expect(stored.first?.properties == ["sku": "A-1", "price": 9.99])
        #expect(stored.first?.timestamp == harness.scheduler.now())
    }

    @Test func e2_immediateModeUploadsPromptlyAfterEachEnqueue() async {
        let harness = Harness()
        harness.track("a")
        await harness.scheduler.advance()
        harness.track("b")
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a", "b"])
        harness.settle()  // store changes follow on the storage queue (R1)
        #expect(harness.store.load().isEmpty)
    }

    @Test func e2_periodicModeUploadsOnItsTimer() async {
        let harness = Harness(mode: .periodic(seconds: 10))
        harness.track("a")
        harness.track("b")
        await harness.scheduler.advance(by: 9.9)
        #expect(harness.uploader.accepted.isEmpty)
        await harness.scheduler.advance(by: 0.1)
        #expect(harness.uploadedTypes == ["a", "b"])
        harness.track("c")
        await harness.scheduler.advance(by: 10)
        #expect(harness.uploadedTypes == ["a", "b", "c"])
    }

    /// A periodic flush is a flush like any other: a `flush()` while its upload is out joins it
    /// (E5) instead of starting a second upload loop that would send the same item twice.
    @Test func e2_e5_aFlushDuringAPeriodicUploadJoinsIt() async {
        let harness = Harness(mode: .periodic(seconds: 10))
        harness.uploader.delay = 2
        harness.track("a")
        await harness.scheduler.advance(by: 10.5)  // the periodic flush's upload is out until 12 s
        #expect(harness.uploader.attempts.count == 1)
        let results = Recorder<SegmentsFlushResult>()
        harness.pipeline.flush { results.record($0) }
        await harness.scheduler.advance(by: 5)
        #expect(harness.uploader.attempts.count == 1)
        #expect(harness.uploadedTypes == ["a"])
        #expect(results.all.map { try? $0.get() } == [1])
    }

    /// A flush during a retry's wait that fails again replaces the wait: one retry is pending,
    /// not two, so the item is not uploaded once more than the failures call for (E3).
    @Test func e3_aFailedFlushDuringARetryWaitReplacesTheRetry() async {
        let harness = Harness()
        harness.uploader.failNextUploads(2, with: Fixture.transient)
        harness.track("a")
        await harness.scheduler.advance()
        #expect(harness.uploader.attempts.count == 1)
        #expect(harness.scheduler.pendingDelays.count == 1)  // the retry's wait
        harness.pipeline.flush { _ in }
        await harness.scheduler.advance()
        #expect(harness.uploader.attempts.count == 2)
        #expect(harness.scheduler.pendingDelays.count == 1)  // the new retry replaced the old one
        await harness.scheduler.advance(by: 3600)
        #expect(harness.uploader.attempts.count == 3)
        #expect(harness.uploadedTypes == ["a"])
    }

    /// Behaviour L2: every transient upload failure is a warning, with the `Tracking:` prefix.
    @Test func l2_eachTransientUploadFailureIsLoggedAsAWarning() async {
        let harness = Harness()
        harness.uploader.failNextUploads(2, with: Fixture.transient)
        harness.track("a")
        await harness.scheduler.advance(by: 3600)
        let retries = harness.logger.entries.filter { $0.message.hasPrefix("Tracking: Upload failed, will retry: ") }
        #expect(retries.count == 2)
        #expect(retries.allSatisfy { $0.level == .warning })
        #expect(harness.uploadedTypes == ["a"])
    }

    /// Setting a periodic mode again re-arms its timer from that moment: the old timer is
    /// cancelled, so there is one timer and the next upload comes a full period later.
    @Test func e2_settingThePeriodicModeAgainRestartsItsOnlyTimer() async {
        let harness = Harness(mode: .periodic(seconds: 10))
        await harness.scheduler.advance(by: 5)
        harness.pipeline.mode = .periodic(seconds: 10)
        #expect(harness.scheduler.pendingWorkCount == 1)
        harness.track("a")
        await harness.scheduler.advance(by: 9.9)  // 14.9 s: the old timer would have fired at 10 s
        #expect(harness.uploader.attempts.isEmpty)
        await harness.scheduler.advance(by: 0.1)
        #expect(harness.uploadedTypes == ["a"])
    }

    @Test func e2_manualModeUploadsOnlyOnFlush() async {
        let harness = Harness(mode: .manual)
        harness.track("a")
        await harness.scheduler.advance(by: 3600)
        #expect(harness.uploader.accepted.isEmpty)
        harness.pipeline.flush { _ in }
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a"])
    }

    @Test func e2_switchingModesTakesEffectAtOnce() async {
        let harness = Harness(mode: .periodic(seconds: 60))
        harness.track("a")
        harness.pipeline.mode = .manual
        await harness.scheduler.advance(by: 120)
        #expect(harness.uploader.accepted.isEmpty)
        #expect(harness.scheduler.pendingWorkCount == 0)
        harness.pipeline.mode = .immediate
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a"])
    }

    @Test func e3_uploadsAreOneRequestPerItemOldestFirst() async {
        let harness = Harness(mode: .manual)
        for type in ["1", "2", "3", "4"] { harness.track(type) }
        harness.pipeline.flush { _ in }
        await harness.scheduler.advance()
        #expect(harness.uploader.attempts.count == 4)
        #expect(harness.uploadedTypes == ["1", "2", "3", "4"])
    }

    @Test func e3_aTransientFailureKeepsTheItemAndRetriesWithBackoff() async {
        let harness = Harness()
        harness.uploader.failNextUploads(2, with: Fixture.transient)
        harness.track("a")
        await harness.scheduler.advance()
        #expect(harness.store.load().count == 1)
        #expect(harness.scheduler.pendingDelays == [2])
        harness.track("b")  // waits for the backoff, keeping the order
        await harness.scheduler.advance(by: 2)
        #expect(harness.scheduler.pendingDelays == [4])
        await harness.scheduler.advance(by: 4)
        #expect(harness.uploadedTypes == ["a", "b"])
        harness.settle()  // store changes follow on the storage queue (R1)
        #expect(harness.store.load().isEmpty)
    }

    @Test func e3_aPermanentFailureIsDroppedAfterTenTriesWithAnErrorLog() async {
        let harness = Harness(mode: .manual)
        harness.uploader.failNextUploads(10, with: Fixture.permanent)
        harness.track("bad")
        for attempt in 1...10 {
            let result = await withCheckedContinuation { continuation in
                harness.pipeline.flush { continuation.resume(returning: $0) }
                Task { await harness.scheduler.advance() }
            }
            #expect((try? result.get()) == 0)
            harness.settle()  // store changes follow on the storage queue (R1)
            #expect(harness.store.load().first?.failedAttempts == (attempt < 10 ? attempt : nil))
        }
        #expect(harness.store.load().isEmpty)
        #expect(harness.logger.entries.contains { $0.level == .error && $0.message.contains("after 10 failed uploads") })
    }

    @Test func e3_aPermanentFailureDoesNotBlockLaterItems() async {
        let harness = Harness(mode: .manual)
        harness.uploader.failNextUploads(1, with: Fixture.permanent)
        harness.track("bad")
        harness.track("good")
        harness.pipeline.flush { _ in }
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["good"])
        harness.settle()  // store changes follow on the storage queue (R1)
        #expect(harness.store.load().map(\.failedAttempts) == [1])
    }

    @Test func e4_aNewPipelineOnTheSameStoreFindsTheWholeQueue() async {
        let first = Harness(mode: .manual)
        for type in ["1", "2", "3"] { first.track(type) }
        let second = Harness(mode: .immediate, queued: first.store.load())
        await second.scheduler.advance()
        #expect(second.uploadedTypes == ["1", "2", "3"])
    }

    @Test func e4_anEventAcceptedButNotYetRemovedWhenTheProcessDiesIsUploadedAgain() async throws {
        // A real journal. The "death": the moment the server accepts the upload, the storage
        // folder is copied as it is on disk, which is all a process killed right then leaves
        // behind; the restarted process is a new store instance on the copy.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("e4-\(UUID().uuidString)")
        let diskAtDeath = folder.appendingPathComponent("at-death")
        let live = folder.appendingPathComponent("live")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileEventQueueStore(directory: live, logger: RecordingLogger())
        let copied = Locked(false)
        let dyingUploader = RecordingEventUploader { _ in
            copied.withLock { $0 = (try? FileManager.default.copyItem(at: live, to: diskAtDeath)) != nil }
        }
        let first = Harness(mode: .manual, uploader: dyingUploader, store: store)
        first.track("purchase")
        first.pipeline.flush { _ in }
        await first.scheduler.advance()
        #expect(dyingUploader.accepted.count == 1)
        #expect(copied.value)
        first.settle()  // store changes follow on the storage queue (R1)
        #expect(store.load().isEmpty)  // the first process removed it after the 2xx: too late

        let afterDeath = FileEventQueueStore(directory: diskAtDeath, logger: RecordingLogger())
        #expect(afterDeath !== store)
        let restarted = Harness(mode: .immediate, store: afterDeath)
        await restarted.scheduler.advance()
        #expect(restarted.uploadedTypes == ["purchase"])  // at least once: a duplicate, never a loss
    }

    @Test func e5_flushReportsTheOutcomeAndLaterCallsJoinTheRunningFlush() async {
        let harness = Harness(mode: .manual)
        harness.uploader.delay = 1
        harness.track("a")
        harness.track("b")
        let results = Recorder<SegmentsFlushResult>()
        harness.pipeline.flush { results.record($0) }
        await harness.scheduler.advance(by: 0.5)
        harness.pipeline.flush { results.record($0) }
        await harness.scheduler.advance(by: 5)
        #expect(results.all.map { try? $0.get() } == [2, 2])
        #expect(harness.uploader.attempts.count == 2)
    }

    @Test func e5_aFlushEndingInATransientFailureReportsIt() async {
        let harness = Harness(mode: .manual)
        harness.uploader.failNextUploads(with: Fixture.transient)
        harness.track("a")
        let results = Recorder<SegmentsFlushResult>()
        harness.pipeline.flush { results.record($0) }
        await harness.scheduler.advance()
        #expect(results.all.map { $0.error?.httpStatus } == [503])
        #expect(harness.scheduler.pendingWorkCount == 0)  // manual mode: the next flush retries
    }

    @Test func t3_everySuccessfulUploadIsReported() async {
        let harness = Harness()
        harness.uploader.failNextUploads(with: Fixture.permanent)
        for type in ["bad", "a", "b"] { harness.track(type) }
        await harness.scheduler.advance()
        #expect(harness.uploads.count == 2)
    }

    @Test func stopRejectsNewItemsAndEndsTimers() async {
        let harness = Harness(mode: .periodic(seconds: 5))
        harness.pipeline.stop()
        #expect(throws: SegmentsError.self) {
            try harness.pipeline.track(eventType: "x", properties: [:], timestamp: nil, customer: Fixture.customerA)
        }
        #expect(harness.scheduler.pendingWorkCount == 0)
    }
}

extension TrackingPipelineTests {
    @Test func e1_anItemTheStoreCannotKeepIsRefusedNotSilentlyLost() async {
        let harness = Harness(mode: .manual)
        harness.store.failAppends(with: SegmentsError(.storage, "disk full"))
        #expect(throws: SegmentsError.self) {
            try harness.pipeline.track(eventType: "x", properties: [:], timestamp: nil, customer: Fixture.customerA)
        }
        #expect(harness.pipeline.queuedCount == 0)
    }
}
