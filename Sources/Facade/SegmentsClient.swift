import Foundation
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
    let engine: SegmentationEngine
    let pipeline = Locked<TrackingPipeline?>(nil)

    /// An unconfigured client built from `options`.
    public init(options: Options = Options()) {
        self.options = options
        engine = SegmentationEngine(
            dependencies: .init(
                scheduler: options.scheduler, clock: options.clock, logger: options.logger,
                deliveryQueue: options.deliveryQueue, timings: options.timings))
    }

    /// A client configured with `configuration`.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for a bad configuration.
    public convenience init(configuration: Configuration, options: Options = Options()) throws {
        self.init(options: options)
        try configure(configuration)
    }

    /// Starts (or restarts) the integration: validates the configuration, opens its stores, loads
    /// the customer, the baseline and the event queue, and serves what waited (SPEC T2, G4).
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`; the client is then left as it was.
    public func configure(_ configuration: Configuration) throws {
        let parts = try ConfiguredParts(configuration, options: options)
        let engine = self.engine
        // The engine first: the new pipeline may upload at once, and the reload each upload
        // requests (SPEC T3) must reach a configured engine.
        engine.configure(
            .init(
                repository: parts.repository, customerStore: parts.customer, baselineStore: parts.baseline,
                storageQueue: parts.storageQueue))
        engine.setTrackingImmediate(configuration.flushingMode == .immediate)
        let newPipeline = TrackingPipeline(
            dependencies: .init(
                scheduler: options.scheduler, clock: options.clock, logger: options.logger,
                retry: options.uploadRetry),
            store: parts.events, uploader: parts.uploader, mode: configuration.flushingMode,
            onUploaded: { engine.reloadAfterUpload() })
        let previous = pipeline.withLock { current in
            defer { current = newPipeline }
            return current
        }
        // Outside the lock: stopping answers waiting flushes, which runs the app's completions.
        previous?.stop()
    }

    /// Whether ``configure(_:)`` succeeded and ``stop()`` did not follow.
    public var isConfigured: Bool { engine.isConfigured }

    /// The current customer's anonymous id, or `nil` before configuration.
    public var customerCookie: String? { engine.customer?.cookie }

    /// The current customer's ids, or `nil` before configuration.
    public var customerIds: CustomerIds? { engine.customer }

    /// Stops the integration (SPEC A3): segment work is cancelled, the baseline deleted, listeners
    /// removed, pending reads failed with `.stopped`; queued events stay on disk for the next start.
    public func stop() {
        let previous = pipeline.withLock { current in
            defer { current = nil }
            return current
        }
        previous?.stop()
        engine.stop()
    }

    /// Switches to a new anonymous customer (SPEC A1, A2).
    public func anonymize() {
        engine.anonymize()
    }

    var configuredPipeline: TrackingPipeline {
        get throws {
            guard let pipeline = pipeline.value else {
                throw SegmentsError(.notConfigured, "the client is not configured")
            }
            return pipeline
        }
    }
}
