import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import RealtimeSegments

/// The file event queue of a directory reads back as many items as the client's queue may hold
/// (Behaviour P7, E4): a client whose `eventQueueCapacity` is above the 100,000 default must not
/// have its store stop reading at 100,000 and set the rest of its queue aside at the next start.
@Suite(Hang.timeLimit(minutes: 1)) struct QueueCapacityStorageTests {
    private static func client(capacity: Int, in directory: URL) -> SegmentsClient {
        SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: TestScheduler(), clock: TestScheduler(), logger: RecordingLogger()),
                transport: RecordingTransport(), storage: .directory(directory), eventQueueCapacity: capacity))
    }

    private static let configuration = SegmentsClient.Configuration(
        backend: .bloomreach(BloomreachConfiguration(integration: .project(token: "capacity"), baseURL: "http://127.0.0.1:9")))

    @Test(arguments: [150_000, 100_000, 10])
    func p7_e4_theStoredQueueIsReadBackUpToTheClientsCapacity(capacity: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let client = Self.client(capacity: capacity, in: directory.url)
        defer { client.stop() }
        try client.configure(Self.configuration)
        // The store the client configured on the directory (shared while the client holds it).
        let store = FileStoreRegistry.stores(in: directory.url, logger: RecordingLogger()).events
        #expect(store.capacity == capacity)
    }
}
