import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking

extension SegmentsClient {
    /// Everything a client is built from. Each default is the live one; tests swap in fakes from
    /// `SegmentsTesting` (a `TestScheduler` as scheduler and clock, a `RecordingTransport`, …).
    public struct Options: Sendable {
        /// Scheduler, clock, logger, the queue listeners and completion handlers are called on,
        /// and backoff jitter.
        public var runtime: SegmentsRuntime
        /// Debounce, max wait, cache time, reload backoff and the foreground refresh age: by default
        /// a reload waits 5 s after the last request (30 s at most), a read is answered from a
        /// fetch under 5 s old, and a failed reload is retried after 2 s doubling to 60 s
        /// (<doc:Behaviour#T5>, <doc:Behaviour#T7>, <doc:Behaviour#G1>, <doc:Behaviour#T11>).
        public var timings: SegmentationTimings
        /// The backoff of failed uploads: after a transient or authorization failure the whole
        /// queue is tried again after 2 s by default, doubling to 60 s, ±20 % (<doc:Behaviour#E3>).
        public var uploadRetry: RetryBackoff
        /// Sends every HTTP request of the built-in backends.
        public var transport: any SegmentsTransport
        /// Wraps ``transport``: requests pass in order, responses in reverse (signing, metrics, …).
        public var middlewares: [any SegmentsTransportMiddleware]
        /// Where state is kept.
        public var storage: Storage
        /// The serial queue the client reads and writes its files on (<doc:Behaviour#R1>); `nil` (the
        /// default) gives each client its own. Tests can pass one and `sync` on it to wait for the
        /// background load of `configure` (<doc:Behaviour#R3>).
        public var storageQueue: DispatchQueue?
        /// How many events and customer updates may wait for upload (<doc:Behaviour#E6>); at the cap
        /// `trackEvent` refuses with a `.storage` error. 100,000 by default.
        public var eventQueueCapacity: Int
        /// Reports whether protected data is available and signals when it becomes available
        /// (<doc:Behaviour#P8>): a stored file refused while it is unavailable is transient, and the
        /// client redoes the refused loads and saves on the signal; one refused while it is
        /// available is a `.storage` error. The live ``SystemProtectedDataAvailability`` by default
        /// (always available on Linux and macOS); tests set a `ManualProtectedDataAvailability` from
        /// `SegmentsTesting` here and trigger it.
        public var protectedData: any ProtectedDataAvailability
        /// The app's lifecycle (<doc:Behaviour#E2>, <doc:Behaviour#E7>, <doc:Behaviour#T11>):
        /// periodic and automatic flushing upload when the app resigns active or goes to the
        /// background, every mode but manual flushes within background time on entering the
        /// background, and listeners get fresh segments on the return to the foreground. The live
        /// ``SystemAppLifecycle`` by default (on Linux nothing arrives); tests set a
        /// `ManualAppLifecycle` from `SegmentsTesting` here and post events to it.
        public var appLifecycle: any AppLifecycle
        /// The device's network path (<doc:Behaviour#N1>–<doc:Behaviour#N3>): with no usable path no
        /// upload and no segment request starts, a one-shot read that needs the network fails at
        /// once with reason ``SegmentsError/Reason/offline`` and listeners keep what they were told;
        /// when the path returns the queue is flushed (every mode but manual), a backoff is cut
        /// short, and listeners get fresh segments when theirs are older than the foreground
        /// refresh age. The live ``SystemNetworkPath`` by default (`NWPathMonitor` on Apple
        /// platforms; usable on Linux unless the app posts otherwise); tests set a
        /// `ManualNetworkPath` from `SegmentsTesting` here and switch it.
        public var networkPath: any NetworkPath

        /// The default of ``eventQueueCapacity``: 100,000 events and customer updates.
        public static let defaultEventQueueCapacity = TrackingPipeline.defaultCapacity

        /// Where a client keeps its customer, baseline and event queue (<doc:Behaviour#P1>).
        public typealias Storage = SegmentsStorage<CustomStores>

        /// The three stores of one integration — customer, baseline, event queue — given together:
        /// the app's own, for ``Storage`` `.custom`.
        public struct CustomStores: Sendable {
            /// The current customer's ids and cookie.
            public var customer: any CustomerStore
            /// The segments listeners were last told, per category, and the link memory.
            public var baseline: any SegmentBaselineStore
            /// The events and customer updates waiting for upload.
            public var events: any EventQueueStore

            /// The three stores of one integration.
            public init(customer: any CustomerStore, baseline: any SegmentBaselineStore, events: any EventQueueStore) {
                self.customer = customer
                self.baseline = baseline
                self.events = events
            }
        }

        /// The live defaults, with any of them replaced.
        public init(
            runtime: SegmentsRuntime = SegmentsRuntime(), timings: SegmentationTimings = SegmentationTimings(), uploadRetry: RetryBackoff = RetryBackoff(),
            transport: any SegmentsTransport = URLSessionSegmentsTransport(),
            middlewares: [any SegmentsTransportMiddleware] = [], storage: Storage = .directory(nil),
            storageQueue: DispatchQueue? = nil, eventQueueCapacity: Int = Options.defaultEventQueueCapacity
        ) {
            self.runtime = runtime
            self.timings = timings
            self.uploadRetry = uploadRetry
            self.transport = transport
            self.middlewares = middlewares
            self.storage = storage
            self.storageQueue = storageQueue
            self.eventQueueCapacity = eventQueueCapacity
            // Set after init to replace them (an init parameter would change the init's signature).
            self.protectedData = SystemProtectedDataAvailability()
            self.appLifecycle = SystemAppLifecycle()
            self.networkPath = SystemNetworkPath()
        }
    }

    /// The backend a client talks to.
    public enum Backend: Sendable {
        /// Bloomreach Engagement, project or stream (the default backend).
        case bloomreach(BloomreachConfiguration)
        /// Optimizely Data Platform audiences (<doc:Behaviour#O5>): which of `candidates` the
        /// customer qualifies for, listed as one category (`audiences` by default). The customer is
        /// identified by its `fs_user_id`, `vuid` or `registered` id, the first one it has, else by
        /// its cookie as a `vuid`. ODP events are out of scope: tracked events are not sent
        /// anywhere, but each still requests a segments reload (<doc:Behaviour#T3>).
        case odp(ODPConfiguration, candidates: [String], category: SegmentCategory = .audiences())
        /// Any backend: the app's own repository and uploader. `id` names the integration's
        /// storage folder.
        case custom(id: String, repository: any SegmentRepository, uploader: any EventUploader)
    }

    /// One integration: its backend and flushing mode.
    public struct Configuration: Sendable {
        /// The backend.
        public var backend: Backend
        /// When tracked events are uploaded (<doc:Behaviour#E2>). When the configuration names
        /// none, the mode set on the client before ``SegmentsClient/configure(_:)`` applies, else
        /// `.immediate`.
        public var flushingMode: FlushingMode {
            didSet { namesFlushingMode = true }
        }
        /// Whether a mode was given, in `init` or by setting ``flushingMode``.
        private(set) var namesFlushingMode: Bool
        /// Properties added to every tracked event and, when ``allowDefaultCustomerProperties``, to
        /// every customer update; the item's own keys win (<doc:Behaviour#E8>, Exponea's
        /// `defaultProperties`). `nil` keeps those set on the client (``SegmentsClient/defaultProperties``)
        /// before configure or by an earlier configuration. Checked by configure as tracked
        /// properties are (<doc:Behaviour#E6>).
        public var defaultProperties: [String: JSONValue]?
        /// Whether customer updates (`identifyCustomer`) get the default properties too; `true` by
        /// default, as Exponea's `allowDefaultCustomerProperties` (<doc:Behaviour#E8>).
        public var allowDefaultCustomerProperties: Bool

        /// Creates a configuration; `flushingMode` `nil` keeps a mode set on the client before
        /// configure, else `.immediate`. It names no default properties: those set on the client
        /// stay (<doc:Behaviour#E8>).
        public init(backend: Backend, flushingMode: FlushingMode? = nil) {
            self.backend = backend
            self.flushingMode = flushingMode ?? .immediate
            self.namesFlushingMode = flushingMode != nil
            self.defaultProperties = nil
            self.allowDefaultCustomerProperties = true
        }

        /// Creates a configuration naming default properties (<doc:Behaviour#E8>): `nil` keeps those
        /// set on the client; `allowDefaultCustomerProperties` says whether customer updates get them.
        public init(
            backend: Backend, flushingMode: FlushingMode? = nil, defaultProperties: [String: JSONValue]?,
            allowDefaultCustomerProperties: Bool = true
        ) {
            self.init(backend: backend, flushingMode: flushingMode)
            self.defaultProperties = defaultProperties
            self.allowDefaultCustomerProperties = allowDefaultCustomerProperties
        }
    }
}
