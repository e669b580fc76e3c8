// `import RealtimeSegments` is the one import an app needs: the facade, the instance API and
// everything they take or return (segments, categories, JSON values, errors, customer ids, the
// store and backend ports, timings, transports and middleware, Bloomreach and ODP configuration,
// the built-in stores).
//
// The Domain's time ports are deliberately NOT re-exported: `Clock` would shadow the standard
// library's `Clock` protocol and `Scheduler` collide with Combine's in every app file that imports
// this module. Code that implements a custom clock or scheduler imports `SegmentsDomain` (its own
// library product); tests use `TestScheduler` from `SegmentsTesting`. `ExportedNamesTests` keeps
// it that way; a new public Domain type is added to the list below on purpose.
@_exported import SegmentsData
@_exported import SegmentsNetworking
@_exported import SegmentsPersistence
@_exported import protocol SegmentsDomain.AppLifecycle
@_exported import enum SegmentsDomain.AppLifecycleEvent
@_exported import struct SegmentsDomain.AudienceIdentifier
@_exported import typealias SegmentsDomain.BackgroundTimeRequest
@_exported import protocol SegmentsDomain.AudienceSegmentFetcher
@_exported import enum SegmentsDomain.AudienceSegmentOption
@_exported import struct SegmentsDomain.CacheFreshness
@_exported import struct SegmentsDomain.CustomerIds
@_exported import protocol SegmentsDomain.CustomerStore
@_exported import struct SegmentsDomain.DebouncePolicy
@_exported import protocol SegmentsDomain.EventQueueStore
@_exported import protocol SegmentsDomain.EventUploader
@_exported import enum SegmentsDomain.JSONValue
@_exported import class SegmentsDomain.LifecycleObservation
@_exported import enum SegmentsDomain.LogLevel
@_exported import protocol SegmentsDomain.ProtectedDataAvailability
@_exported import typealias SegmentsDomain.ProtectedDataObservation
@_exported import struct SegmentsDomain.RetryBackoff
@_exported import struct SegmentsDomain.Segment
@_exported import struct SegmentsDomain.SegmentBaseline
@_exported import protocol SegmentsDomain.SegmentBaselineStore
@_exported import struct SegmentsDomain.SegmentCategory
@_exported import protocol SegmentsDomain.SegmentRepository
@_exported import struct SegmentsDomain.SegmentSnapshot
@_exported import typealias SegmentsDomain.SegmentsByCategory
@_exported import struct SegmentsDomain.SegmentsError
@_exported import protocol SegmentsDomain.SegmentsLogger
@_exported import struct SegmentsDomain.TrackedEvent
@_exported import struct SegmentsDomain.VisitorSegments
@_exported import protocol SegmentsDomain.VisitorSegmentsStore
