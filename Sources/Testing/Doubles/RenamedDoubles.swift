// The doubles' names before they were named by role (Docs/TestingWithFakes.md, "Naming"), so
// 0.x tests keep compiling with a warning and a fix-it. They go at 1.0.

/// The former name of ``RecordingTransport``.
@available(*, deprecated, renamed: "RecordingTransport")
public typealias MockTransport = RecordingTransport

/// The former name of ``RecordingLogger``.
@available(*, deprecated, renamed: "RecordingLogger")
public typealias CapturingLogger = RecordingLogger

/// The former name of ``RecordingODPEndpoint``.
@available(*, deprecated, renamed: "RecordingODPEndpoint")
public typealias ODPGraphQLFake = RecordingODPEndpoint

/// The former name of ``ImmediateSegmentsScheduler``: an error with a fix-it, not a warning.
///
/// A deprecated alias would still be a second `ImmediateScheduler` beside Combine's, and a file
/// importing both would stay ambiguous; the compiler passes over an unavailable declaration when an
/// available one has the same name, so with this alias `ImmediateScheduler` is Combine's.
@available(*, unavailable, renamed: "ImmediateSegmentsScheduler")
public typealias ImmediateScheduler = ImmediateSegmentsScheduler
