import Foundation
import SegmentsDomain

/// Where and when the SDK's work runs and is reported: the scheduler, the clock, the logger, the
/// queue answers are delivered on, and the random source of backoff jitter.
///
/// One value of this type is shared by everything a client builds (``SegmentsClient``, the
/// audience client, the segmentation engine, the tracking pipeline), so a test replaces time,
/// logging and delivery in one place:
///
/// ```swift
/// let scheduler = TestScheduler()            // SegmentsTesting: virtual time, also a clock
/// let options = SegmentsClient.Options(runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler))
/// ```
///
/// Each default is the live one.
public struct SegmentsRuntime: Sendable {
    /// Runs every delayed or asynchronous step: debounce, backoff, periodic flushes, requests.
    public var scheduler: any SegmentsScheduler
    /// The wall clock (timestamps) and the monotonic uptime (cache age, deadlines).
    public var clock: any SegmentsClock
    /// Where log lines go; by default warnings and errors to standard output. Control characters
    /// in a line (server text such as category names may hold them) reach it escaped: the logger
    /// set here is wrapped, and reading this property gives the wrapper.
    public var logger: any SegmentsLogger {
        get { escapingLogger }
        set { escapingLogger = EscapingSegmentsLogger.wrapping(newValue) }
    }
    private var escapingLogger: any SegmentsLogger
    /// The serial queue listeners and completion handlers are called on (<doc:Behaviour#D8>); use
    /// `.main` in UI apps.
    public var deliveryQueue: DispatchQueue
    /// A value in `0..<1` for backoff jitter.
    public var random: @Sendable () -> Double

    /// The live runtime, with any part replaced.
    public init(
        scheduler: any SegmentsScheduler = TaskScheduler(), clock: any SegmentsClock = SystemClock(),
        logger: any SegmentsLogger = SinkSegmentsLogger(),
        deliveryQueue: DispatchQueue = DispatchQueue(label: "RealtimeSegments.delivery"),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.scheduler = scheduler
        self.clock = clock
        self.escapingLogger = EscapingSegmentsLogger.wrapping(logger)
        self.deliveryQueue = deliveryQueue
        self.random = random
    }
}
