import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour E2, E3, E6, R2, R3: the pipeline's backoff, authorization pauses, refusals,
/// cap, group commit and background load, on virtual time.
@Suite(Hang.timeLimit(minutes: 2)) struct TrackingPipelineRevision2Tests {
    typealias Harness = TrackingPipelineTests.Harness

    static let unavailable = SegmentsError(.httpStatus, "unavailable", httpStatus: 503, retryAfter: 120)
    static let unauthorized = SegmentsError(.unauthorized, "unauthorized", httpStatus: 401)

    @Test func e2_aSuccessfulUploadClearsThePendingBackoff() async {
        let harness = Harness()
        harness.uploader.failNextUploads(1, with: Self.unavailable)
        harness.track("a")
        await harness.scheduler.advance()
        #expect(harness.scheduler.pendingDelays == [120])
        var advancing: Task<Void, Never>?
        let result = await withCheckedContinuation { continuation in
            harness.pipeline.flush { continuation.resume(returning: $0) }
            advancing = Task { await harness.scheduler.advance() }
        }
        // The flush can answer before that advance has returned: let it end before advancing again.
        await advancing?.value
        #expect((try? result.get()) == 1)
        #expect(harness.scheduler.pendingWorkCount == 0, "the 120 s backoff ended with the success")
        harness.track("b")
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a", "b"], "the next immediate upload is prompt")
    }

    /// Every upload answered 503 with `Retry-After: 600`: over 30 s of virtual time, how many
    /// uploads a pipeline in `mode` makes for one queued item.
    static func uploadsDuringABackoff(_ mode: FlushingMode, seconds: Int = 30) async -> Int {
        let harness = Harness(mode: mode)
        harness.uploader.failNextUploads(1_000, with: SegmentsError(.httpStatus, "unavailable", httpStatus: 503, retryAfter: 600))
        harness.track("a")
        for _ in 0..<seconds { await harness.scheduler.advance(by: 1) }
        return harness.uploader.attempts.count
    }

    /// E3: the server asked for 600 s; the periodic timer (every second) must not upload over it,
    /// just as immediate mode does not.
    @Test func e2_e3_aPeriodicPipelineHonoursAPendingBackoffAsAnImmediateOneDoes() async {
        let immediate = await Self.uploadsDuringABackoff(.immediate)
        let periodic = await Self.uploadsDuringABackoff(.periodic(seconds: 1))
        #expect(immediate == 1)
        #expect(periodic == immediate, "periodic(1 s) made \(periodic) uploads in 30 s, immediate \(immediate)")
    }

    @Test func e2_switchingToManualCancelsAPendingRetry() async {
        let harness = Harness()
        harness.uploader.failNextUploads(1, with: Fixture.transient)
        harness.track("a")
        await harness.scheduler.advance()
        #expect(harness.scheduler.pendingWorkCount == 1)
        harness.pipeline.mode = .manual
        #expect(harness.scheduler.pendingWorkCount == 0)
        await harness.scheduler.advance(by: 3600)
        #expect(harness.uploader.accepted.isEmpty)
    }

    @Test func e3_authorizationFailuresPauseTheWholeQueueWithBackoffAndDropNothing() async {
        let harness = Harness()
        harness.uploader.failNextUploads(30, with: Self.unauthorized)
        for index in 0..<10 { harness.track("e\(index)") }
        var elapsed = 0.0
        while harness.uploader.attempts.count < 30, elapsed < 10_000 {
            await harness.scheduler.advance(by: 60)
            elapsed += 60
        }
        #expect(harness.uploader.attempts.count == 30)
        #expect(Set(harness.uploader.attempts.map(\.kind)) == [.event(type: "e0")], "the queue waits as a whole")
        #expect(harness.store.load().count == 10)
        #expect(harness.store.load().allSatisfy { $0.failedAttempts == 0 })
        await harness.scheduler.advance(by: 60)  // the key rotation is over
        #expect(harness.uploadedTypes == (0..<10).map { "e\($0)" })
        harness.settle()  // store changes follow on the storage queue (R1)
        #expect(harness.store.load().isEmpty)
    }

    @Test func e6_eventsThatCouldNotBeReplayedAreRefusedWithAClearError() throws {
        let harness = Harness(mode: .manual)
        func nested(_ depth: Int) -> JSONValue {
            var value: JSONValue = .int(1)
            for _ in 1..<depth { value = .array([value]) }
            return value
        }
        // The properties object is level 1: 63 arrays below it make 64 levels, the deepest accepted.
        try harness.pipeline.track(eventType: "ok", properties: ["deep": nested(64)], timestamp: nil, customer: Fixture.customerA)
        let cases: [(String, [String: JSONValue])] = [
            ("levels", ["deep": nested(65)]),
            ("levels", ["deeper": nested(1_000)]),
            ("KiB", ["big": .string(String(repeating: "x", count: 65 * 1024))]),
            // Rev 4: a non-finite number is dropped, not refused (e6_aNonFiniteNumberIsDropped… below).
        ]
        for (words, properties) in cases {
            let error = #expect(throws: SegmentsError.self) {
                try harness.pipeline.track(eventType: "bad", properties: properties, timestamp: nil, customer: Fixture.customerA)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
        }
        #expect(harness.store.load().map(\.kind) == [.event(type: "ok")])
    }

    @Test func e6_atTheCapTrackingIsRefusedWithAClearErrorAndNothingIsDropped() throws {
        let harness = Harness(mode: .manual, capacity: 3)
        for index in 0..<3 { harness.track("e\(index)") }
        let error = #expect(throws: SegmentsError.self) {
            try harness.pipeline.track(eventType: "e3", properties: [:], timestamp: nil, customer: Fixture.customerA)
        }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("full") == true)
        #expect(harness.pipeline.queuedCount == 3)
        #expect(harness.store.load().map(\.kind) == (0..<3).map { .event(type: "e\($0)") })
    }

    @Test func r2_appendsAreSyncedOffTheCallersThreadInBatches() async {
        let harness = Harness(mode: .manual)
        harness.storageQueue.suspend()  // the storage queue is busy: appends still return
        for index in 0..<5 { harness.track("e\(index)") }
        #expect(harness.store.load().count == 5, "written before track returned")
        #expect(harness.store.syncs.isEmpty, "no sync on the caller's thread")
        harness.storageQueue.resume()
        harness.settle()
        #expect(harness.store.syncs == [5], "one sync covered the five appends")
        harness.track("e5")
        harness.settle()
        #expect(harness.store.syncs == [5, 6])
    }

    @Test func r3_itemsTrackedAndFlushesAskedForWhileTheQueueLoadsAreServedInOrderOnceLoaded() async {
        let stored = (0..<3).map {
            TrackedEvent(kind: .event(type: "stored\($0)"), customerIds: Fixture.customerA, properties: [:], timestamp: Date())
        }
        let harness = Harness(mode: .manual, queued: stored, suspendStorage: true)
        harness.track("new0")
        harness.track("new1")
        let result = Locked<SegmentsFlushResult?>(nil)
        harness.pipeline.flush { outcome in result.withLock { $0 = outcome } }
        await harness.scheduler.advance(by: 60)
        #expect(harness.uploader.attempts.isEmpty, "nothing runs on a half-loaded queue")
        harness.storageQueue.resume()
        harness.settle()
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["stored0", "stored1", "stored2", "new0", "new1"])
        #expect((try? result.value?.get()) == 5)
    }

    /// R1: the count from memory never waits for the load (while loading it is what is known so
    /// far); the exact count is answered once the stored queue is in memory.
    @Test func r1_theCountNeverWaitsForTheLoadAndTheExactCountFollowsIt() async {
        let stored = (0..<3).map {
            TrackedEvent(kind: .event(type: "stored\($0)"), customerIds: Fixture.customerA, properties: [:], timestamp: Date())
        }
        let harness = Harness(mode: .manual, queued: stored, suspendStorage: true)
        harness.track("new0")
        #expect(harness.pipeline.queuedCount == 1, "the stored items are not known yet")
        let exact = Locked<Int?>(nil)
        harness.pipeline.queuedCount { count in exact.withLock { $0 = count } }
        #expect(exact.value == nil, "answered once loaded")
        harness.storageQueue.resume()
        harness.settle()
        #expect(exact.value == 4)
        #expect(harness.pipeline.queuedCount == 4)
    }

    /// R1, E3: an upload's removal is queued on the storage queue, not waited for: while the queue
    /// is busy (a group-commit fsync), successes are reported and the flush goes on; the removals
    /// are written in order once it is free.
    @Test func r1_e3_anUploadDoesNotWaitForTheStorageQueue() async {
        let harness = Harness(mode: .manual)
        harness.track("a")
        harness.track("b")
        harness.settle()
        harness.storageQueue.suspend()  // busy with a long fsync
        let result = await withCheckedContinuation { continuation in
            harness.pipeline.flush { continuation.resume(returning: $0) }
            Task { await harness.scheduler.advance() }
        }
        #expect((try? result.get()) == 2)
        #expect(harness.uploads.count == 2, "each success is reported at once")
        #expect(harness.store.load().count == 2, "the removals wait on the storage queue")
        harness.storageQueue.resume()
        harness.settle()
        #expect(harness.store.load().isEmpty)
    }
}
