// `import RealtimeSegments` brings the model (Segment, SegmentCategory, SegmentsError, JSONValue,
// CustomerIds, …) and the ports (SegmentRepository, Clock, Scheduler, …) with it, as the Exponea
// SDK's single import did.
@_exported import SegmentsDomain
