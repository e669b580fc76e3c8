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
    /// What a configured client holds; the mode set before configure (see Behaviour E2).
    struct Attachment: Sendable {
        var pipeline: TrackingPipeline?
        /// The storage directory's owner lock (see Behaviour P5), held until ``stop()``.
        var lock: StorageDirectoryLock?
        /// A flushing mode set before configure: applied by configure unless its configuration
        /// names one.
        var modeBeforeConfigure: FlushingMode?
    }

    let options: Options
    let engine: SegmentationEngine
    /// The one serial queue this client reads and writes its files on, engine and pipeline alike
    /// (see Behaviour R1): saves and loads stay in order and never run on the app's thread.
    let storageQueue: DispatchQueue
    let attachment = Locked(Attachment())

    /// An unconfigured client built from `options`.
    public init(options: Options = Options()) {
        self.options = options
        let storageQueue = options.storageQueue ?? DispatchQueue(label: "RealtimeSegments.storage")
        self.storageQueue = storageQueue
        engine = SegmentationEngine(
            dependencies: .init(
                runtime: options.runtime, storageQueue: storageQueue, timings: options.timings))
    }

    /// A client configured with `configuration`.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for a bad configuration.
    public convenience init(configuration: Configuration, options: Options = Options()) throws {
        self.init(options: options)
        try configure(configuration)
    }

    /// Starts (or restarts) the integration: validates the configuration, takes the storage
    /// directory's owner lock (see Behaviour P5), reads the small customer file, and returns; the segment
    /// baseline and the event queue load in the background on the client's storage queue, and
    /// calls made meanwhile are served in call order once they are loaded (see Behaviour R3, T2, G4).
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`, or `.storage` when another process (or
    ///   another client of this process) uses the storage directory; the client is then left as
    ///   it was.
    public func configure(_ configuration: Configuration) throws {
        let integration = try ConfiguredIntegration(configuration, options: options, owner: self, storageQueue: storageQueue)
        // Another client of this process used the folder before: its last saves may still be
        // queued on its storage queue; they are written before this client reads the folder.
        integration.previousStorageQueue?.sync {}
        let engine = self.engine
        let mode = attachment.withLock { attachment -> FlushingMode in
            defer { attachment.modeBeforeConfigure = nil }
            return configuration.namesFlushingMode
                ? configuration.flushingMode : attachment.modeBeforeConfigure ?? configuration.flushingMode
        }
        // The engine first: the new pipeline may upload at once, and the reload each upload
        // requests (see Behaviour T3) must reach a configured engine.
        engine.configure(
            .init(repository: integration.repository, customerStore: integration.customer, baselineStore: integration.baseline))
        engine.setTrackingImmediate(mode == .immediate)
        let newPipeline = TrackingPipeline(
            dependencies: .init(
                runtime: options.runtime, retry: options.uploadRetry, storageQueue: storageQueue, capacity: options.eventQueueCapacity),
            store: integration.events, uploader: integration.uploader, mode: mode,
            onUploaded: { engine.reloadAfterUpload() })
        let (previous, previousLock) = attachment.withLock { attachment in
            defer {
                attachment.pipeline = newPipeline
                attachment.lock = integration.lock
            }
            return (attachment.pipeline, attachment.lock)
        }
        // Outside the lock: stopping answers waiting flushes, which runs the app's completions.
        previous?.stop()
        if let previousLock, previousLock !== integration.lock {
            // Another directory now: the old one is free once the saves queued for it are written.
            FileStoreRegistry.release(previousLock)
            storageQueue.async { _ = previousLock }
        }
    }

    /// Whether ``configure(_:)`` succeeded and ``stop()`` did not follow.
    public var isConfigured: Bool { engine.isConfigured }

    /// The current customer's anonymous id, or `nil` before configuration.
    public var customerCookie: String? { engine.customer?.cookie }

    /// The current customer's ids, or `nil` before configuration.
    public var customerIds: CustomerIds? { engine.customer }

    /// Stops the integration (see Behaviour A3): segment work is cancelled, the baseline deleted, listeners
    /// removed, pending reads failed with `.stopped`; queued events stay on disk for the next start.
    public func stop() {
        let (previous, lock) = attachment.withLock { attachment in
            defer {
                attachment.pipeline = nil
                attachment.lock = nil
            }
            return (attachment.pipeline, attachment.lock)
        }
        previous?.stop()
        engine.stop()
        // Another client of this process may take the directory at once; the flock itself is
        // released once the saves already queued are written.
        if let lock { FileStoreRegistry.release(lock) }
        storageQueue.async { _ = lock }
    }

    /// Switches to a new anonymous customer (see Behaviour A1, A2).
    public func anonymize() {
        engine.anonymize()
    }

    var configuredPipeline: TrackingPipeline {
        get throws {
            guard let pipeline = attachment.value.pipeline else {
                throw SegmentsError.notConfigured
            }
            return pipeline
        }
    }
}
