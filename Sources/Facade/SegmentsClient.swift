import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking
import SegmentsPersistence

/// One fully independent RealtimeSegments client: the instance API behind `Exponea.shared`.
///
/// It composes the segmentation engine, the tracking pipeline, the stores and a backend. Two
/// clients in one process share nothing. Listeners and one-shot reads may come before
/// ``configure(_:)``; they are served once it runs.
///
/// ```swift
/// let client = SegmentsClient()
/// try client.configure(.init(backend: .bloomreach(.init(
///     integration: .project(token: "TOKEN"), authorization: .token("API_KEY")))))
/// let token = client.addListener(category: .discovery(), includeFirstLoad: true) { print($0) }
/// try client.trackEvent(properties: ["sku": "A-1"], timestamp: nil, eventType: "view_item")
/// let content = try await client.getSegments(category: .content())
/// ```
public final class SegmentsClient: Sendable {
    let options: Options
    /// The client's lifecycle, customer and segments: every lifecycle call is one transition of
    /// its machine, so they take effect in one total order (<doc:Behaviour#A4>).
    let engine: SegmentationEngine
    /// The ports that live as long as this client, built here once from ``Options``: its runtime,
    /// and the one serial queue it reads and writes its files on, engine and pipelines alike
    /// (<doc:Behaviour#R1>), so saves and loads stay in order and never run on the app's thread.
    let ports: ClientPorts
    /// The client's registration with ``Options/protectedData``, ended with the client: the engine
    /// decides which configuration redoes what its storage refused (<doc:Behaviour#P8>).
    let protectedDataObservation: ProtectedDataObservation
    /// The client's registration with ``Options/appLifecycle``, ended with the client.
    let lifecycleObservation: LifecycleObservation
    /// The client's registration with ``Options/networkPath``, ended with the client: each report
    /// is one transition of the engine's machine, in the order of every other call
    /// (<doc:Behaviour#N1>, <doc:Behaviour#N2>).
    let networkPathObservation: NetworkPathObservation

    /// An unconfigured client built from `options`.
    public init(options: Options = Options()) {
        self.options = options
        let ports = ClientPorts(runtime: options.runtime, storageQueue: options.storageQueue)
        self.ports = ports
        let engine = SegmentationEngine(dependencies: .init(client: ports, timings: options.timings))
        self.engine = engine
        protectedDataObservation = options.protectedData.observeAvailability { [weak engine] in
            engine?.protectedDataBecameAvailable()
        }
        let lifecycle = options.appLifecycle
        lifecycleObservation = lifecycle.observe { [weak engine] event in
            engine?.appLifecycleChanged(event, lifecycle: lifecycle)
        }
        networkPathObservation = options.networkPath.observe { [weak engine] status in
            engine?.networkPathChanged(status)
        }
    }

    /// A client configured with `configuration`.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for a bad configuration.
    public convenience init(configuration: Configuration, options: Options = Options()) throws {
        self.init(options: options)
        try configure(configuration)
    }

    /// Starts (or restarts) the integration: validates the configuration, takes the storage
    /// directory's owner lock (<doc:Behaviour#P5>), reads the small customer file (or takes the
    /// customer from memory when its save is still queued), and returns without waiting for any
    /// disk work queued before (<doc:Behaviour#R1>); the segment baseline and the event queue load
    /// in the background on the client's storage queue, and calls made meanwhile are served in call
    /// order once they are loaded (<doc:Behaviour#R3>, <doc:Behaviour#T2>, <doc:Behaviour#G4>).
    /// Configure, stop, anonymize, identify and flushing-mode changes take effect in one order,
    /// even from several threads (<doc:Behaviour#A4>).
    ///
    /// Before the device's first unlock, when the stored files are refused (<doc:Behaviour#P8>),
    /// configure still succeeds: with a customer made in memory when the customer file cannot be
    /// read, which the stored customer replaces once it can be read, unless identify or anonymize
    /// decided meanwhile. A refusal while protected data is available (``Options/protectedData``;
    /// always on Linux and macOS) is a permission problem and fails the configure.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`, or `.storage` when another process (or
    ///   another client of this process) uses the storage directory, or the system refuses its
    ///   lock file or customer file (`EACCES`/`EPERM`, naming the file) while protected data is
    ///   available; the client is then left as it was.
    public func configure(_ configuration: Configuration) throws {
        let defaults = try configuredDefaults(configuration)
        var integration = try ConfiguredIntegration(configuration, options: options, owner: self, client: ports)
        if let previous = integration.claim?.previousWrites {
            // Another client of this process used the folder before: its last writes may still be
            // queued on its storage queue. This client's storage queue waits for them before it
            // reads the folder; the caller does not.
            ports.storageQueue.async { previous.wait() }
        }
        let engine = self.engine
        let pipeline = TrackingPipeline(
            dependencies: .init(client: ports, retry: options.uploadRetry, capacity: options.eventQueueCapacity),
            store: integration.events, uploader: integration.uploader, mode: .manual, loadsAtOnce: false,
            onItemUploaded: { [weak engine] in engine?.itemUploaded() })
        integration.ports.tracking = pipeline
        engine.configure(
            integration.ports, flushingMode: configuration.namesFlushingMode ? configuration.flushingMode : nil,
            defaultProperties: defaults)
    }

    /// A client let go of without ``stop()`` gives its storage folder back as a stop does, with the
    /// customer it ended with, but keeps what it stored (<doc:Behaviour#P5>, <doc:Behaviour#R1>).
    deinit {
        engine.clientReleased()
    }

    /// Whether ``configure(_:)`` succeeded and ``stop()`` did not follow.
    public var isConfigured: Bool { engine.isConfigured }

    /// The current customer's anonymous id, or `nil` before configuration.
    public var customerCookie: String? { engine.customer?.cookie }

    /// The current customer's ids, or `nil` before configuration.
    public var customerIds: CustomerIds? { engine.customer }

    /// Stops the integration (<doc:Behaviour#A3>): segment work is cancelled, the baseline deleted,
    /// listeners removed — a ``SegmentsModel`` excepted: its lists read `[]` and follow the next
    /// configuration (<doc:Behaviour#M5>) — ``changes(of:includeFirstLoad:)`` streams finished, pending
    /// reads failed with `.stopped`; queued events stay on disk for the next start. Before the first
    /// configure it drops the tracking calls waiting for it (<doc:Behaviour#E1>). When it
    /// returns, the storage folder is free: another client of the process may configure on it at
    /// once, and another process once the client's queued writes are done (<doc:Behaviour#P5>).
    public func stop() {
        engine.stop()
    }

    /// Switches to a new anonymous customer: a fresh cookie and no hard ids. Waiting and in-flight
    /// segment work is dropped, waiting reads are answered `[]`, the baseline deleted, listeners of
    /// categories that had segments are told `[]`, and a reload for the new customer follows when
    /// listeners exist (<doc:Behaviour#A1>, <doc:Behaviour#A2>). Before the first configure it waits
    /// with the tracking calls made before it and is applied in their order when configure runs:
    /// calls before it are stamped with the configured customer, calls after it with a new
    /// anonymous one, and an earlier identify's ids are not merged into that new customer
    /// (<doc:Behaviour#E1>). After ``stop()`` it does nothing.
    public func anonymize() {
        engine.anonymize()
    }
}
