import Foundation
import SegmentsDomain

/// The default ``EventUploader``: one Bloomreach tracking request per queued item, for a project or
/// a Data Hub stream (<doc:Behaviour#Requests>, <doc:Behaviour#E3>).
///
/// An event goes to `…/customers/events` with its `event_type`; a customer update goes to
/// `…/customers` without one. Both carry the `customer_ids` stamped on the item when it was
/// tracked, its `properties`, and its `timestamp` in Unix seconds (fractional).
///
/// Failures throw ``SegmentsError`` as ``BloomreachSegmentRepository`` does; properties that have no
/// JSON form (a NaN or infinite number) throw `.invalidConfiguration`, which is permanent.
package struct BloomreachEventUploader: EventUploader {
    private let sender: BloomreachRequestSender

    /// Creates an uploader.
    ///
    /// - Parameters:
    ///   - configuration: the integration, base URL and authorization.
    ///   - transport: sends the requests; wrap it in middleware to sign or measure them.
    ///   - scheduler: times the 1 s wait before an authorization retry.
    ///   - clock: the "now" that an HTTP-date `Retry-After` is measured from.
    ///   - logger: receives `Segments:` warnings.
    package init(
        configuration: BloomreachConfiguration, transport: any SegmentsTransport, scheduler: any SegmentsScheduler,
        clock: any SegmentsClock, logger: any SegmentsLogger
    ) {
        sender = BloomreachRequestSender(
            configuration: configuration, transport: transport, scheduler: scheduler, clock: clock, logger: logger)
    }

    /// Uploads `event`; returns after a 2xx, whose body is ignored.
    package func upload(_ event: TrackedEvent) async throws {
        let endpoint: BloomreachEndpoint
        switch event.kind {
        case .event: endpoint = .event
        case .customerUpdate: endpoint = .customerUpdate
        }
        _ = try await sender.send(endpoint, body: BloomreachBodies.tracking(event))
    }
}
