import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// Behaviour R3 at the pipeline's own merge: items tracked after the store was read but before
/// the pipeline took the stored queue in are in no list the store returned, so only the pipeline
/// can queue them — in call order, after the stored ones. The store is the real file store;
/// a wrapper holds its `load()` result until the test has tracked those items.
@Suite(Hang.timeLimit(minutes: 1)) struct TrackedWhileLoadingTests {
    /// The file store, with its load held open after reading until `release` is signalled.
    final class HeldLoadStore: EventQueueStore {
        let store: FileEventQueueStore
        let read = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        init(_ store: FileEventQueueStore) { self.store = store }
        func load() -> [TrackedEvent] {
            let items = store.load()
            read.signal()
            _ = release.wait(timeout: .now() + 30)  // bounded: a test that never releases fails, not hangs
            return items
        }
        func append(_ event: TrackedEvent) throws { try store.append(event) }
        func remove(id: UUID) throws { try store.remove(id: id) }
        func update(_ event: TrackedEvent) throws { try store.update(event) }
        func sync() throws { try store.sync() }
    }

    @Test func r3_itemsTrackedAfterTheStoreWasReadAreQueuedInCallOrderAfterTheStoredOnes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("r3-held-load-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stored = (0..<3).map {
            TrackedEvent(kind: .event(type: "stored\($0)"), customerIds: Fixture.customerA, properties: [:], timestamp: Date())
        }
        do {
            let writer = FileEventQueueStore(directory: folder, logger: RecordingLogger())
            for event in stored { try writer.append(event) }
            try writer.sync()
        }
        let held = HeldLoadStore(FileEventQueueStore(directory: folder, logger: RecordingLogger()))
        let harness = TrackingPipelineTests.Harness(mode: .manual, suspendStorage: true, store: held)
        harness.track("beforeTheRead")
        harness.storageQueue.resume()
        #expect(await signalled(held.read), "the store was read")
        for index in 0..<3 { harness.track("afterTheRead\(index)") }  // in no list the store returned
        held.release.signal()
        #expect(drained(harness.storageQueue))
        let result = Locked<SegmentsFlushResult?>(nil)
        harness.pipeline.flush { outcome in result.withLock { $0 = outcome } }
        await harness.scheduler.advance()
        #expect(harness.uploadedTypes == ["stored0", "stored1", "stored2", "beforeTheRead", "afterTheRead0", "afterTheRead1", "afterTheRead2"])
        #expect((try? result.value?.get()) == 7)
    }
}
