import Foundation
import SegmentsDomain
import SegmentsData

extension Exponea {
    /// What ``shared`` is built from: everything the instance API injects (<doc:Behaviour#X3>) —
    /// transport and middleware, timings and upload backoff, storage, the delivery queue, the app
    /// lifecycle, protected-data availability, the network path, the scheduler and clock.
    ///
    /// The shared instance takes these options when it is built, on the first use of
    /// `Exponea.shared` or `SegmentationManager.shared`, and keeps them for the life of the
    /// process. So set them first, typically as the app launches:
    ///
    /// ```swift
    /// Exponea.sharedOptions.middlewares = [AppRequestSigner()]      // the app's SegmentsTransportMiddleware
    /// Exponea.sharedOptions.timings = SegmentationTimings(debounce: DebouncePolicy(delay: 2, maxWait: 30))
    /// Exponea.sharedDeliveryQueue = .main                    // the same as sharedOptions.runtime.deliveryQueue
    /// Exponea.shared.configure(Exponea.ProjectSettings(projectToken: "TOKEN", authorization: .token("KEY")))
    /// ```
    ///
    /// One part is not taken: `runtime.logger`. The shared instance logs through ``logger``, the
    /// Exponea SDK's assignable logger (set its ``Logger/sink`` or assign a ``Logger`` subclass).
    ///
    /// Set after the shared instance is built, nothing changes and an error line is logged
    /// (`Segments: Exponea.sharedOptions was set after the shared instance was built; …`); reading
    /// it always returns the options the shared instance uses (or will use). Instances built with
    /// ``init(client:)`` use their client's options instead.
    public static var sharedOptions: SegmentsClient.Options {
        get { sharedOptionsChoice.value }
        set { sharedOptionsChoice.set(newValue) }
    }

    /// The options of ``shared``, open to a choice until ``shared`` is built.
    static let sharedOptionsChoice = ChosenUntilFirstUse(
        SegmentsClient.Options(runtime: SegmentsRuntime(deliveryQueue: DispatchQueue(label: "RealtimeSegments.delivery"))),
        logger: loggerOfShared,
        lateChoice: """
            Segments: Exponea.sharedOptions was set after the shared instance was built; it keeps \
            the options it was built with. Set them before the first use of Exponea.shared or SegmentationManager.shared.
            """)

    /// The shared instance as it is built on first use: over a client with the options chosen in
    /// `options` (fixed from then on), logging through `logger`.
    package static func makeShared(logger: any SegmentsLogger, options: ChosenUntilFirstUse<SegmentsClient.Options>) -> Exponea {
        var chosen = options.use()
        chosen.runtime.logger = logger
        return Exponea(client: SegmentsClient(options: chosen))
    }
}
