import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking

extension AudienceSegmentsClient.Options {
    /// Options that touch neither the disk nor the network, ready for tests and previews:
    /// visitor segments in memory (the default options keep them in the application-support
    /// directory, so a test that forgets `.inMemory` would write to the user's disk), a transport
    /// that answers every request with a `.network` error, and a delivery queue of its own.
    ///
    /// ```swift
    /// let audiences = AudienceSegmentsClient(fetcher: fetcher, candidateSegments: ["seg-1"], options: .testing)
    /// ```
    ///
    /// Use ``testing(runtime:transport:cacheCapacity:cacheTimeout:)``
    /// to put a `TestScheduler`, a `RecordingTransport` or a `RecordingLogger` from `SegmentsTesting` in.
    public static var testing: Self { testing() }

    /// Options that touch neither the disk nor the network, with the given parts: visitor segments
    /// always in memory; by default requests start at once on the live scheduler, cache entries age
    /// on the system clock, and the transport answers every request with a `.network` error.
    ///
    /// Give a `TestScheduler` as the runtime's `clock` to age the cache on virtual time. As its `scheduler` it also
    /// holds every request until the test calls `advance()`; where only outcomes matter, pass
    /// `ImmediateSegmentsScheduler()` (see `Docs/TestingWithFakes.md`).
    ///
    /// - Parameters:
    ///   - runtime: scheduler (starts each request), clock (the time of cache entries), logger and
    ///     delivery queue; by default the live ones and a new serial delivery queue.
    ///   - transport: sends ODP requests; `nil` (the default): none leaves the process.
    ///   - cacheCapacity: the most users cached (100).
    ///   - cacheTimeout: how long an answer stays cached, in seconds (600).
    public static func testing(
        runtime: SegmentsRuntime = SegmentsRuntime(deliveryQueue: DispatchQueue(label: "RealtimeSegments.audiences.testing.delivery")),
        transport: (any SegmentsTransport)? = nil, cacheCapacity: Int = 100,
        cacheTimeout: TimeInterval = 600
    ) -> Self {
        Self(
            runtime: runtime, transport: transport ?? OfflineTransport(),
            cacheCapacity: cacheCapacity, cacheTimeout: cacheTimeout, visitorStorage: .inMemory)
    }
}

/// The transport of ``AudienceSegmentsClient/Options/testing``: nothing leaves the process.
struct OfflineTransport: SegmentsTransport {
    func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        throw SegmentsError(
            .network, "Options.testing sends no request: give it a transport, e.g. a RecordingTransport serving a RecordingODPEndpoint")
    }
}
