import Foundation
import RealtimeSegments
import SegmentsTesting

/// Collects values handed to a callback from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    func record(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.value }
    var count: Int { all.count }
}

/// A temporary storage directory, removed by `remove()`.
struct TemporaryDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("segments-tests-\(UUID().uuidString)")
    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A client on virtual time over a scripted custom backend.
final class ClientHarness: Sendable {
    let scheduler = TestScheduler()
    let logger = CapturingLogger()
    let deliveryQueue = DispatchQueue(label: "client-tests.delivery")
    let storageQueue = DispatchQueue(label: "client-tests.storage")
    let repository: RecordingSegmentRepository
    let uploader: RecordingEventUploader
    let transport = MockTransport()
    let client: SegmentsClient

    init(storage: SegmentsClient.Options.Storage = .inMemory, repository: RecordingSegmentRepository? = nil) {
        self.repository = repository ?? RecordingSegmentRepository(scheduler: scheduler)
        uploader = RecordingEventUploader(scheduler: scheduler)
        client = SegmentsClient(
            options: .init(
                logger: logger, scheduler: scheduler, clock: scheduler, deliveryQueue: deliveryQueue,
                transport: transport, storage: storage, storageQueue: storageQueue))
    }

    var customConfiguration: SegmentsClient.Configuration {
        .init(backend: .custom(id: "test", repository: repository, uploader: uploader))
    }

    func configure(flushingMode: FlushingMode = .immediate) throws {
        var configuration = customConfiguration
        configuration.flushingMode = flushingMode
        try client.configure(configuration)
    }

    /// Lets what configure loads in the background come in (SPEC R3), then advances virtual time.
    func advance(by seconds: TimeInterval = 0) async {
        storageQueue.sync {}
        await scheduler.advance(by: seconds)
        deliveryQueue.sync {}
    }
}

enum Fixture {
    static let s1 = Segment(id: "s1", segmentationId: "g1")
    static let s2 = Segment(id: "s2", segmentationId: "g2")
}
