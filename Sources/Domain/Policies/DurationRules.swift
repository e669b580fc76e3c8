import Foundation

/// The checks every configured duration goes through (<doc:Behaviour#P7>): a bad value is
/// ``SegmentsError/Code/invalidConfiguration``, never a crash or a busy loop.
///
/// Why they matter: FoundationNetworking converts a time-out with `Int(timeoutInterval) * 1000`,
/// so `.infinity`, NaN or anything from about 9.2e15 s traps; a time-out of 0 or less fails every
/// request at once and a retry of 0 s retries in a tight loop.
package enum DurationRules {
    /// The longest request time-out: 300 s.
    package static let maximumTimeout: TimeInterval = 300

    /// `value` must be a request time-out: finite and `0 < value ≤ 300` s.
    package static func checkTimeout(_ value: TimeInterval, _ name: String) throws {
        guard value.isFinite, value > 0, value <= maximumTimeout else {
            throw SegmentsError(
                .invalidConfiguration, "\(name) must be more than 0 and at most \(Int(maximumTimeout)) seconds")
        }
    }

    /// `value` must be a finite number of seconds greater than 0; the refusal quotes it.
    package static func checkPositive(_ value: TimeInterval, _ name: String) throws {
        guard value.isFinite, value > 0 else {
            throw SegmentsError(.invalidConfiguration, "\(name) must be a finite number of seconds greater than 0, not \(value)")
        }
    }

    /// `value` must be a finite number of seconds, 0 or more.
    package static func checkNonNegative(_ value: TimeInterval, _ name: String) throws {
        guard value.isFinite, value >= 0 else {
            throw SegmentsError(.invalidConfiguration, "\(name) must be a finite number of seconds, 0 or more")
        }
    }
}
