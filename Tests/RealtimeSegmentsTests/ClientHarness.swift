import Foundation
import Testing
import SegmentsDomain
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

    /// Behaviour P7 refuses a storage directory writable by its group: folders the tests make or
    /// copy are made with umask 022, as on CI, whatever the shell's (002 is common on Linux desktops).
    private static let groupWriteMasked: Void = { _ = umask(0o022) }()

    init() {
        _ = Self.groupWriteMasked
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// New instances of the three file stores on one folder. A client given them reads only what is on
/// disk: nothing is shared with a client that used other instances (see Behaviour E4, P2 restart tests).
/// Concrete types, not an `Options.CustomStores`: a restart test compares instances (`!==`).
struct FileStores {
    let customer: FileCustomerStore
    let baseline: FileSegmentBaselineStore
    let events: FileEventQueueStore

    init(_ directory: URL, logger: any SegmentsLogger = RecordingLogger()) {
        customer = FileCustomerStore(directory: directory, logger: logger)
        baseline = FileSegmentBaselineStore(directory: directory, logger: logger)
        events = FileEventQueueStore(directory: directory, logger: logger)
    }

    var storage: SegmentsClient.Options.Storage { .custom(customer: customer, baseline: baseline, events: events) }

    /// Waits until the customer file holds `cookie` and, when asked, the baseline file exists. A
    /// client saves them on its engine's storage queue after the call that changed them returned,
    /// so a restart test waits for them as a real restart would (the process that wrote them lived
    /// on). The files are read directly, not through stores: opening a store on a folder removes
    /// temporary files it takes for its own leftovers, which would break a save still in flight.
    static func settled(_ directory: URL, cookie: String?, withBaseline: Bool = false) async -> Bool {
        func text(_ name: String) -> String? {
            try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return await eventually {
            (cookie.map { text("customer.json")?.contains($0) == true } ?? true)
                && (!withBaseline || text("segment-baseline.json") != nil)
        }
    }

    /// True when no store is an instance of `other`: a restart test asserts it.
    func shareNoInstance(with other: FileStores) -> Bool {
        customer !== other.customer && baseline !== other.baseline && events !== other.events
    }
}

/// A client on virtual time over a scripted custom backend.
final class ClientHarness: Sendable {
    let scheduler = TestScheduler()
    let logger = RecordingLogger()
    let deliveryQueue = DispatchQueue(label: "client-tests.delivery")
    let storageQueue = DispatchQueue(label: "client-tests.storage")
    let repository: RecordingSegmentRepository
    let uploader: RecordingEventUploader
    let transport = RecordingTransport()
    /// The app's lifecycle, posted to by the test (see Behaviour E2, E7, T11).
    let lifecycle = ManualAppLifecycle()
    /// The device's network path, switched by the test (see Behaviour N1–N3).
    let networkPath = ManualNetworkPath()
    let client: SegmentsClient

    init(
        storage: SegmentsClient.Options.Storage = .inMemory, repository: RecordingSegmentRepository? = nil,
        timings: SegmentationTimings = SegmentationTimings()
    ) {
        self.repository = repository ?? RecordingSegmentRepository(scheduler: scheduler)
        uploader = RecordingEventUploader(scheduler: scheduler)
        var options = SegmentsClient.Options(
            runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger, deliveryQueue: deliveryQueue), timings: timings,
            transport: transport, storage: storage, storageQueue: storageQueue)
        options.appLifecycle = lifecycle
        options.networkPath = networkPath
        client = SegmentsClient(options: options)
    }

    var customConfiguration: SegmentsClient.Configuration {
        .init(backend: .custom(id: "test", repository: repository, uploader: uploader))
    }

    func configure(flushingMode: FlushingMode = .immediate) throws {
        var configuration = customConfiguration
        configuration.flushingMode = flushingMode
        try client.configure(configuration)
    }

    /// Lets what configure loads in the background come in (see Behaviour R3), then advances virtual time.
    func advance(by seconds: TimeInterval = 0) async {
        await drained(storageQueue)
        await scheduler.advance(by: seconds)
        await drained(deliveryQueue)
    }
}

enum Fixture {
    static let s1 = Segment(id: "s1", segmentationId: "g1")
    static let s2 = Segment(id: "s2", segmentationId: "g2")
}
