#if canImport(Testing)
    import Foundation
    import Testing

    /// A time limit for every test of a suite, so a deadlock fails one test instead of hanging the
    /// whole run — on every platform the package supports.
    ///
    /// Swift Testing's `.timeLimit(_:)` exists only on macOS 13, iOS 16, tvOS 16 and watchOS 9 or
    /// later (and on Linux), while this package supports macOS 10.15 and iOS 13, so a suite that
    /// writes `.timeLimit` directly does not compile for the older systems. This trait is
    /// `.timeLimit(.minutes(minutes))` where that exists and no limit elsewhere.
    ///
    /// ```swift
    /// @Suite(Hang.timeLimit(minutes: 2)) struct CheckoutTests { … }
    /// ```
    ///
    /// `Hang` is only the namespace, named for what the limit catches; the plainer
    /// `.timeLimit(minutes:)` on `Trait` cannot be offered, because Swift Testing applies no trait
    /// but its own `TimeLimitTrait` as a limit, and that type is missing where this gives none.
    public enum Hang {
        /// `.timeLimit(.minutes(minutes × timeScale))` where Swift Testing has it, no limit
        /// elsewhere.
        public static func timeLimit(minutes: Int) -> any SuiteTrait {
            if #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) {
                return .timeLimit(.minutes(minutes * timeScale))
            }
            return NoTimeLimit()
        }

        /// How many times longer than written the limits are: the whole number in the environment
        /// variable `SEGMENTS_TEST_TIME_SCALE` (1 when it is unset or not a number of at least 1).
        /// A run under a sanitizer, which slows every test several times, on a machine other work
        /// shares, sets it (the package's CI sets 3 for its ThreadSanitizer and AddressSanitizer
        /// runs): the limits are there to end a deadlock, not to time the tests. Waits of your own
        /// that must hold up under the same conditions scale by it too: ``scaled(_:)``.
        public static let timeScale: Int = {
            let text = ProcessInfo.processInfo.environment["SEGMENTS_TEST_TIME_SCALE"] ?? ""
            return max(Int(text) ?? 1, 1)
        }()

        /// `seconds` times ``timeScale``: the limit of a wait of your own that, like the suites'
        /// limits, is there to end a hang, not to time the code.
        ///
        /// ```swift
        /// let answered = semaphore.wait(timeout: .now() + Hang.scaled(30)) == .success
        /// ```
        public static func scaled(_ seconds: TimeInterval) -> TimeInterval {
            seconds * Double(timeScale)
        }
    }

    /// The stand-in for ``Hang/timeLimit(minutes:)`` where Swift Testing has no time limits.
    private struct NoTimeLimit: SuiteTrait, TestTrait {}
#endif
