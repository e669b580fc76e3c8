import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking

/// The Exponea SDK's entry point, kept so apps switch by changing their import.
///
/// A thin adapter over one ``SegmentsClient`` (``client``). Every method is usable from any
/// thread and never crashes the app: a bad configuration, or a call before
/// ``configure(_:flushingSetup:)-(ProjectSettings,_)`` or
/// ``configure(_:flushingSetup:)-(StreamSettings,_)``, is refused with an error log line.
///
/// ``shared`` is just one instance: ``init(client:)`` builds another over any client, so code that
/// takes an `Exponea` (and a ``SegmentationManager``) is unit-tested with a client built from the
/// fakes of `SegmentsTesting`, never the process-wide integration:
///
/// ```swift
/// let client = SegmentsClient(options: .init(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler), storage: .inMemory))
/// try client.configure(.init(backend: .custom(id: "test", repository: repository, uploader: uploader)))
/// let exponea = Exponea(client: client)
/// let banner = PromoBanner(exponea: exponea, segmentation: SegmentationManager(exponea: exponea))  // the app's code
/// ```
public final class Exponea: Sendable {
    /// The process-wide instance, logging through ``logger`` and calling back on
    /// ``sharedDeliveryQueue``, built from ``sharedOptions`` (<doc:Behaviour#X3>). It is built on
    /// first use (of `shared` or of ``SegmentationManager/shared``).
    public static let shared = Exponea.makeShared(logger: loggerOfShared, options: sharedOptionsChoice)

    /// The client behind the facade.
    public let client: SegmentsClient

    /// What the Exponea SDK's forms keep beside the client: the Stream JWT, the configuration they
    /// were given (<doc:Behaviour#X1>).
    let compatibility = ExponeaCompatibilityState()

    /// A facade over `client`, for code that takes its `Exponea` as a parameter (app code under
    /// test, a second integration): ``shared`` is one instance, this builds others.
    ///
    /// It logs through `client`'s logger and calls back on its delivery queue (both from its
    /// ``SegmentsClient/Options``); it is configured by its own `configure` calls, or already is
    /// when `client` is. Facades over the same client share everything: they are one integration.
    public init(client: SegmentsClient) {
        self.client = client
    }

    /// The shared instance as it is built on first use: over a client with `logger` and the queue
    /// chosen in `deliveryQueue`, which is fixed from then on.
    package static func makeShared(
        logger: any SegmentsLogger, deliveryQueue: ChosenUntilFirstUse<DispatchQueue>
    ) -> Exponea {
        Exponea(client: SegmentsClient(options: SegmentsClient.Options(runtime: SegmentsRuntime(logger: logger, deliveryQueue: deliveryQueue.use()))))
    }

    /// Configures a Bloomreach Engagement project integration. Without `flushingSetup`, a
    /// ``flushingMode`` set before applies (<doc:Behaviour#E2>), else `.immediate`. A
    /// ``ProjectSettings/authorizationProvider`` authorizes requests as in stream mode.
    public func configure(_ settings: ProjectSettings, flushingSetup: FlushingSetup? = nil) {
        configureIntegration(settings, flushingSetup: flushingSetup)
    }

    /// Configures a Bloomreach Data Hub stream integration. Without `flushingSetup`, a
    /// ``flushingMode`` set before applies (<doc:Behaviour#E2>), else `.immediate`. Without an
    /// ``StreamSettings/authorizationProvider``, requests carry the JWT given to
    /// ``setSdkAuthToken(_:)`` (<doc:Behaviour#X1>).
    public func configure(_ settings: StreamSettings, flushingSetup: FlushingSetup? = nil) {
        configureIntegration(settings, flushingSetup: flushingSetup)
    }

    /// Configures the client; a refusal is logged as an error.
    /// - Returns: whether the configuration was applied.
    @discardableResult
    func configure(
        _ configuration: BloomreachConfiguration, flushingSetup: FlushingSetup?, defaults: Configuration? = nil
    ) -> Bool {
        do {
            // An Exponea `Configuration` names default properties (E8) only when it has them.
            try client.configure(
                .init(
                    backend: .bloomreach(configuration), flushingMode: flushingSetup?.mode.core,
                    defaultProperties: defaults?.defaultPropertyValues,
                    allowDefaultCustomerProperties: defaults?.allowDefaultCustomerProperties ?? true))
            return true
        } catch {
            client.options.runtime.logger.log(.error, "Segments: Configuration refused: \(SegmentsError.wrapping(error))")
            return false
        }
    }

    /// Whether the SDK is configured.
    public var isConfigured: Bool { client.isConfigured }

    /// The current customer's anonymous id, or `nil` before configure.
    public var customerCookie: String? { client.customerCookie }

    /// Answers the segments of `category` exactly once on the delivery queue
    /// (``sharedDeliveryQueue`` for ``shared``); `[]` on any failure (<doc:Behaviour#G5>). Before
    /// configure the call waits and is answered once configured.
    public func getSegments(
        force: Bool = false, category: SegmentCategory, result: @escaping @Sendable ([Segment]) -> Void
    ) {
        client.getSegments(force: force, category: category) { answer in
            result((try? answer.get()) ?? [])
        }
    }

    /// The `async` form: throws ``SegmentsError`` on failure, so a failure can be told apart from
    /// "no segments" (<doc:Behaviour#G5>).
    public func getSegments(force: Bool = false, category: SegmentCategory) async throws -> [Segment] {
        try await client.getSegments(force: force, category: category)
    }

    /// Merges hard ids into the current customer and tracks a customer update (<doc:Behaviour#E1>,
    /// <doc:Behaviour#T4>). Before configure the call waits in memory, in call order, and is
    /// applied when configure runs (at most 1,000 calls wait; more are refused with an error line).
    public func identifyCustomer(
        customerIds: [String: String], properties: [String: JSONValue] = [:], timestamp: Double? = nil
    ) {
        logFailure("identifyCustomer") {
            try client.identifyCustomer(
                customerIds: customerIds, properties: properties, timestamp: timestamp.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// Queues an event stamped with the current customer's ids, for upload as the flushing mode
    /// says; `timestamp` is Unix seconds, now when `nil` (<doc:Behaviour#E1>). Before configure the
    /// call waits in memory, in call order, and is queued when configure runs, stamped with the
    /// configured customer (at most 1,000 calls wait; more are refused). With a `nil` or empty type,
    /// a refused call, or after ``stopIntegration()``, nothing is queued and an error line starting
    /// `Tracking: trackEvent failed:` is logged. A non-finite number is dropped with one warning
    /// (<doc:Behaviour#E6>); ``defaultProperties`` are added (<doc:Behaviour#E8>).
    public func trackEvent(properties: [String: JSONValue], timestamp: Double? = nil, eventType: String?) {
        logFailure("trackEvent") {
            try client.trackEvent(
                properties: properties, timestamp: timestamp.map(Date.init(timeIntervalSince1970:)),
                eventType: eventType ?? "")
        }
    }

    /// When tracked events are uploaded (<doc:Behaviour#E2>); setting it takes effect at once.
    public var flushingMode: FlushingMode {
        get { FlushingMode(client.flushingMode) }
        set { client.flushingMode = newValue.core }
    }

    /// Uploads queued events now.
    public func flushData() {
        client.flush { _ in }
    }

    /// Uploads queued events now and reports the outcome on the delivery queue as the Exponea
    /// SDK's ``FlushResult`` (<doc:Behaviour#E5>, <doc:Behaviour#X1>); a `nil` completion only
    /// flushes. A call while a flush runs joins it and gets its outcome.
    public func flushData(completion: (@Sendable (FlushResult) -> Void)?) {
        guard let completion else { return flushData() }
        client.flush { completion(FlushResult($0)) }
    }

    /// Switches to a new anonymous customer: a fresh cookie and no hard ids. Waiting and in-flight
    /// segment work is dropped, the baseline deleted, listeners of categories that had segments
    /// are told `[]`, and a reload for the new customer follows when listeners exist
    /// (<doc:Behaviour#A1>, <doc:Behaviour#A2>). Before configure it waits with the tracking calls
    /// and is applied, in their order, when configure runs (<doc:Behaviour#E1>). The Stream JWT set
    /// with ``setSdkAuthToken(_:)`` belonged to the old customer and is cleared, as in the Exponea SDK.
    public func anonymize() {
        compatibility.streamJwt.setToken(nil)
        client.anonymize()
    }

    /// ``anonymize()``, then `completion` on the main queue once the new customer is in place and
    /// saved (<doc:Behaviour#A5>; Exponea SDK 4.x). Before configure, `completion` is still called.
    public func anonymize(completion: (() -> Void)?) {
        guard let completion else { return anonymize() }
        compatibility.streamJwt.setToken(nil)
        let call = MainQueueCompletion(call: completion)
        client.anonymize { call.call() }
    }

    /// Stops the integration and deletes its local data, as the Exponea SDK 4.x does
    /// (<doc:Behaviour#A3>): at once ``isConfigured`` is `false`, segment work stops, every listener
    /// but a ``SegmentsModel``'s is removed, waiting reads get `[]`, and further calls are refused
    /// until the next configure. Behind that, what is queued is uploaded in one last flush (it ends
    /// when the queue is empty or an upload fails), then the customer, the segment baseline and the
    /// event queue — items that could not be uploaded included — are deleted; the next configure
    /// starts a new customer. Before any configure, it deletes what the default storage holds
    /// without uploading it. See ``SegmentsClient/stopAndDeleteData(completion:)``.
    public func stopIntegration() {
        client.stopAndDeleteData(completion: nil)
    }

    /// ``stopIntegration()``, then `completion` on the main queue once the upload and the deletion
    /// are done (Exponea SDK 4.x); a `configure` made in `completion` works and starts a new customer.
    public func stopIntegration(completion: (() -> Void)?) {
        guard let completion else { return client.stopAndDeleteData(completion: nil) }
        let call = MainQueueCompletion(call: completion)
        client.stopAndDeleteData { call.call() }
    }

    private func logFailure(_ operation: String, _ body: () throws -> Void) {
        do { try body() } catch {
            client.options.runtime.logger.log(.error, "Tracking: \(operation) failed: \(SegmentsError.wrapping(error))")
        }
    }
}

extension Exponea.FlushingMode {
    var core: FlushingMode {
        switch self {
        case .immediate: .immediate
        case .periodic(let seconds): .periodic(seconds: TimeInterval(seconds))
        case .automatic: .automatic
        case .manual: .manual
        }
    }

    init(_ core: FlushingMode) {
        switch core {
        case .immediate: self = .immediate
        case .periodic(let seconds):
            // Total, never a trap: a valid interval is finite and above 0 (anything else is refused
            // before it is stored), one beyond `Int`'s range reads as `Int.max`, and anything that
            // still is not a positive number reads as the smallest period, 1.
            if seconds >= Double(Int.max) {
                self = .periodic(Int.max)
            } else if seconds >= 1 {
                self = .periodic(Int(seconds.rounded()))
            } else {
                self = .periodic(1)
            }
        case .automatic: self = .automatic
        case .manual: self = .manual
        }
    }
}

/// A completion of the Exponea SDK 4.x's forms, which it takes without `@Sendable`: it is called
/// once, on the main queue only (<doc:Behaviour#A3>, <doc:Behaviour#A5>).
private struct MainQueueCompletion: @unchecked Sendable {
    let call: () -> Void
}
