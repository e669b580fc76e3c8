import Foundation
import SegmentsDomain

/// The wall clock: the live ``Clock``.
public struct SystemClock: Clock {
    /// Creates the clock.
    public init() {}

    /// `Date()`.
    public func now() -> Date { Date() }
}
