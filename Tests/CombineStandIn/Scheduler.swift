// Stands in for Combine (absent on Linux) in ExportedNamesTests: a module that, like Combine on
// Apple platforms, exports a top-level `Scheduler`. Importing it beside RealtimeSegments makes
// the name ambiguous the moment RealtimeSegments re-exports its own `Scheduler`.

/// Combine's `Scheduler`, in name only.
public protocol Scheduler {}

/// A type conforming to the stand-in, so the test can use the name.
public struct ImmediateStandInScheduler: Scheduler {
    /// Creates one.
    public init() {}
}
