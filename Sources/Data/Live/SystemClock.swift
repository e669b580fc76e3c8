import Foundation
import SegmentsDomain

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The live `SegmentsClock` (the `SegmentsDomain` port): `Date()` for wall time, and a monotonic clock that
/// keeps counting while the device sleeps for durations (<doc:Behaviour#T10>).
public struct SystemClock: SegmentsClock {
    /// Creates the clock.
    public init() {}

    /// `Date()`.
    public func now() -> Date { Date() }

    /// `CLOCK_MONOTONIC` on Apple platforms (it includes sleep there), `CLOCK_BOOTTIME` on Linux
    /// (Linux's `CLOCK_MONOTONIC` stops during suspend). Never affected by setting the wall clock.
    public func uptime() -> TimeInterval {
        var spec = timespec()
        #if canImport(Darwin)
        clock_gettime(CLOCK_MONOTONIC, &spec)
        #else
        clock_gettime(CLOCK_BOOTTIME, &spec)
        #endif
        return TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1e9
    }
}
