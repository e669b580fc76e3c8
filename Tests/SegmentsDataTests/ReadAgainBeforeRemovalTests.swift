import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// The tracking pipeline when its store is read again while a removal it decided is still queued
/// on the storage queue — the protected-data retry (Behaviour P8, E3, E4; issue 32, finding 13) —
/// and when a stopped pipeline hands its store on (A3, A4, E5; finding 11).
@Suite(Hang.timeLimit(minutes: 1)) struct ReadAgainBeforeRemovalTests {
    typealias Harness = TrackingPipelineTests.Harness

    /// An event tracked before the first unlock is uploaded before the retry ran (the scheduler's
    /// work first); the retry writes it back and reads it from the file before the removal is
    /// written. The pipeline does not queue it again: it goes up once.
    @Test func p8_e4_anItemReadAgainBeforeItsRemovalIsWrittenIsUploadedOnce() async throws {
        let harness = Harness()
        harness.track("a")
        let written = try #require(harness.store.load().first)
        harness.storageQueue.suspend()  // the removal waits behind the retry's read
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a"])
        harness.pipeline.adoptStored([written])  // what the retry read from the file
        await harness.scheduler.advance()
        harness.storageQueue.resume()
        harness.settle()
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a"])
        #expect(harness.pipeline.queuedCount == 0)
        #expect(harness.store.load().isEmpty)
    }

    /// Once the removal is written, a later read cannot find the item; an item the pipeline never
    /// held is queued and, in immediate mode, uploaded (P8: the retry's items are not lost).
    @Test func p8_anItemTheRetryFindsThatThePipelineNeverHeldIsUploaded() async throws {
        let harness = Harness()
        let stored = TrackedEvent(kind: .event(type: "unread"), customerIds: Fixture.customerA, properties: [:], timestamp: Date())
        harness.pipeline.adoptStored([stored])
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["unread"])
    }

    /// The retry is a load: as after the first one, immediate mode uploads what is queued — an
    /// item kept after a permanent failure too, though the retry found nothing new (E2, P8).
    @Test func p8_e2_afterTheRetryImmediateModeUploadsWhatIsQueued() async throws {
        let harness = Harness()
        harness.uploader.failNextUploads(1, with: SegmentsError(.httpStatus, "bad request", httpStatus: 400))
        harness.track("a")
        await harness.scheduler.advance()
        #expect(harness.uploader.attempts.count == 1)
        #expect(harness.uploadedTypes.isEmpty)
        harness.pipeline.adoptStored([])
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["a"])
    }

    /// An upload already sent when the pipeline stops comes back as usual: its item's removal
    /// is written, nothing more is sent (A3), and only then does what waits for the pipeline to
    /// be settled run (the next pipeline's load: A4, E4).
    @Test func a3_e4_anUploadOutAtTheStopIsWrittenAndOnlyThenIsThePipelineSettled() async {
        let harness = Harness()
        harness.uploader.delay = 1
        harness.track("a")
        harness.track("b")
        await harness.scheduler.advance()
        #expect(harness.uploader.attempts.count == 1)  // a is out
        let settled = Recorder<Int>()
        let store = harness.store
        let storageQueue = harness.storageQueue
        // Asked before the stop, as the client asks when a configuration ends.
        harness.pipeline.whenSettled {
            // Queued on the storage queue behind the removal, as the next pipeline's load is.
            storageQueue.async { settled.record(store.load().count) }
        }
        harness.pipeline.stop()
        harness.settle()
        #expect(settled.all.isEmpty)
        await harness.scheduler.advance(by: 1)
        harness.settle()
        #expect(harness.uploadedTypes == ["a"])
        #expect(harness.uploader.attempts.count == 1)  // b was not sent after the stop
        #expect(settled.all == [1])  // b stays on disk for the next start
    }

    /// An upload decided before the stop whose turn on the scheduler comes after it is not sent
    /// (A3); the pipeline is settled then, with the item on disk (E4).
    @Test func a3_e4_anUploadDecidedBeforeTheStopIsNotSentAfterIt() async {
        let harness = Harness()
        harness.track("a")
        let settled = Recorder<Int>()
        let store = harness.store
        let storageQueue = harness.storageQueue
        harness.pipeline.whenSettled { storageQueue.async { settled.record(store.load().count) } }
        harness.pipeline.stop()
        await harness.scheduler.advance()
        harness.settle()
        #expect(harness.uploader.attempts.isEmpty)
        #expect(settled.all == [1])
    }
}
