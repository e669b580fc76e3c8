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
    /// Use ``testing(logger:scheduler:clock:deliveryQueue:transport:cacheCapacity:cacheTimeout:)``
    /// to put a `TestScheduler`, a `MockTransport` or a `CapturingLogger` from `SegmentsTesting` in.
    public static var testing: Self { testing() }

    /// Options that touch neither the disk nor the network, with the given parts: visitor segments
    /// always in memory; by default requests start at once on the live scheduler, cache entries age
    /// on the system clock, and the transport answers every request with a `.network` error.
    ///
    /// Give a `TestScheduler` as `clock` to age the cache on virtual time. As `scheduler` it also
    /// holds every request until the test calls `advance()`; where only outcomes matter, pass
    /// `ImmediateScheduler()` (see `Docs/TestingWithFakes.md`).
    ///
    /// - Parameters:
    ///   - logger: where log lines go (warnings and errors to standard output by default).
    ///   - scheduler: starts each request.
    ///   - clock: the time of cache entries.
    ///   - deliveryQueue: where completion handlers run; a new serial queue by default.
    ///   - transport: sends ODP requests; `nil` (the default): none leaves the process.
    ///   - cacheCapacity: the most users cached (100).
    ///   - cacheTimeout: how long an answer stays cached, in seconds (600).
    public static func testing(
        logger: any SegmentsLogger = SinkSegmentsLogger(), scheduler: any Scheduler = TaskScheduler(),
        clock: any Clock = SystemClock(),
        deliveryQueue: DispatchQueue = DispatchQueue(label: "RealtimeSegments.audiences.testing.delivery"),
        transport: (any SegmentsTransport)? = nil, cacheCapacity: Int = 100,
        cacheTimeout: TimeInterval = 600
    ) -> Self {
        Self(
            logger: logger, scheduler: scheduler, clock: clock, deliveryQueue: deliveryQueue, transport: transport ?? OfflineTransport(),
            cacheCapacity: cacheCapacity, cacheTimeout: cacheTimeout, visitorStorage: .inMemory)
    }
}

/// The transport of ``AudienceSegmentsClient/Options/testing``: nothing leaves the process.
struct OfflineTransport: SegmentsTransport {
    func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        throw SegmentsError(
            .network, "Options.testing sends no request: give it a transport, e.g. a MockTransport serving an ODPGraphQLFake")
    }
}
