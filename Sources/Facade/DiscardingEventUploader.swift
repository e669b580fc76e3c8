import SegmentsDomain

/// The uploader of the ODP backend: ODP events are out of scope, so tracked items are accepted and
/// dropped. Accepting them keeps every tracked item requesting a segments reload
/// (<doc:Behaviour#T3>), so audiences are re-checked after user activity.
struct DiscardingEventUploader: EventUploader {
    let logger: any SegmentsLogger

    func upload(_ event: TrackedEvent) async throws {
        logger.log(.verbose, "Segments: The ODP backend does not upload tracked events; one was dropped")
    }
}
