import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking

extension AudienceSegmentsClient {
    /// Everything an audience client is built from. Each default is the live one; tests swap in
    /// fakes from `SegmentsTesting` (a `TestScheduler` as scheduler and clock, a `RecordingTransport`, …).
    public struct Options: Sendable {
        /// Scheduler (starts each request), clock (the time of cache entries), logger and the
        /// queue completion handlers are called on.
        public var runtime: SegmentsRuntime
        /// Sends every ODP request.
        public var transport: any SegmentsTransport
        /// Wraps ``transport``: requests pass in order, responses in reverse (signing, metrics, …).
        public var middlewares: [any SegmentsTransportMiddleware]
        /// The most users whose qualified segments are cached: 100 (<doc:Behaviour#O3>); 0 disables
        /// the cache.
        public var cacheCapacity: Int
        /// How long qualified segments stay cached: 600 s (<doc:Behaviour#O3>); 0 or less never
        /// expires.
        public var cacheTimeout: TimeInterval
        /// Where visitor segments are kept.
        public var visitorStorage: VisitorStorage

        /// Where visitor segments are kept (<doc:Behaviour#V3>, <doc:Behaviour#P1>):
        /// `visitor-segments.json` in the directory (in the platform's application-support
        /// directory, folder `visitors`, when `nil`), in memory, or in the app's own store. Clients
        /// in one process that use the same directory share one registry, so their updates never
        /// overwrite each other; across processes the directory's owner lock keeps a second process
        /// out (<doc:Behaviour#P5>: its saves fail with `.storage`, logged).
        public typealias VisitorStorage = SegmentsStorage<any VisitorSegmentsStore>

        /// The live defaults, with any of them replaced.
        public init(
            runtime: SegmentsRuntime = SegmentsRuntime(deliveryQueue: DispatchQueue(label: "RealtimeSegments.audiences.delivery")),
            transport: any SegmentsTransport = URLSessionSegmentsTransport(),
            middlewares: [any SegmentsTransportMiddleware] = [], cacheCapacity: Int = 100,
            cacheTimeout: TimeInterval = 600, visitorStorage: VisitorStorage = .directory(nil)
        ) {
            self.runtime = runtime
            self.transport = transport
            self.middlewares = middlewares
            self.cacheCapacity = cacheCapacity
            self.cacheTimeout = cacheTimeout
            self.visitorStorage = visitorStorage
        }

        /// The visitor registry these options describe: shared per directory, new otherwise.
        var visitorRegistry: VisitorSegmentsRegistry {
            switch visitorStorage {
            case .directory(let directory):
                let folder = directory ?? StorageLocation.defaultDirectory(integrationId: "visitors")
                return AudienceSegmentsClient.sharedRegistry(in: folder, logger: runtime.logger)
            case .inMemory:
                return VisitorSegmentsRegistry(store: InMemoryVisitorSegmentsStore(), logger: runtime.logger)
            case .custom(let store):
                return VisitorSegmentsRegistry(store: store, logger: runtime.logger)
            }
        }
    }
}

extension AudienceSegmentsClient {
    /// The visitor registries of the storage directories in use in this process. A registry keeps
    /// its visitors in memory and serializes read-change-save under its lock, so two registries on
    /// one file would lose each other's updates: clients on one directory share one registry (and
    /// one file store), which ends with its last client.
    private static let registries = DirectoryTable<WeakReference<VisitorSegmentsRegistry>>(
        keepingWhile: { $0.object != nil })

    /// The registry of `directory`, shared with any other live client of the same directory.
    static func sharedRegistry(in directory: URL, logger: any SegmentsLogger) -> VisitorSegmentsRegistry {
        registries.withEntry(of: directory, make: { WeakReference(object: nil) }) { entry in
            if let shared = entry.object { return shared }
            let registry = VisitorSegmentsRegistry(
                store: FileVisitorSegmentsStore(directory: directory, logger: logger), logger: logger)
            entry.object = registry
            return registry
        }
    }
}
