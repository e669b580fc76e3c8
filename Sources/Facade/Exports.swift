// `import RealtimeSegments` is the one import an app needs: the facade, the instance API and
// everything they take or return (segments, categories, JSON values, errors, customer ids, the
// store, backend, time and logging ports, timings, transports and middleware, Bloomreach and ODP
// configuration, the built-in stores).
//
// The Domain is re-exported whole: its public names are the SDK's own (`SegmentsClock`,
// `SegmentsScheduler`, …), none of them a name that Swift, Foundation or Combine also export
// at top level, so nothing in an app file becomes ambiguous (`ExportedNamesTests`).
@_exported import SegmentsData
@_exported import SegmentsDomain
@_exported import SegmentsNetworking
@_exported import SegmentsPersistence
