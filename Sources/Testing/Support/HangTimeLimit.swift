#if canImport(Testing)
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
        /// `.timeLimit(.minutes(minutes))` where Swift Testing has it, no limit elsewhere.
        public static func timeLimit(minutes: Int) -> any SuiteTrait {
            if #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) {
                return .timeLimit(.minutes(minutes))
            }
            return NoTimeLimit()
        }
    }

    /// The stand-in for ``Hang/timeLimit(minutes:)`` where Swift Testing has no time limits.
    private struct NoTimeLimit: SuiteTrait, TestTrait {}
#endif
