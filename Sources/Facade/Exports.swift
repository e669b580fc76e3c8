// `import RealtimeSegments` is the one import an app needs: the model (Segment, SegmentCategory,
// SegmentsError, JSONValue, …), the ports, and every building block the instance API accepts
// (timings, schedulers, transports and middleware, Bloomreach configuration, stores).
@_exported import SegmentsData
@_exported import SegmentsDomain
@_exported import SegmentsNetworking
@_exported import SegmentsPersistence
