import Testing

/// The time limit of a suite: `.timeLimit(.minutes(minutes))` where the system has it (it needs
/// macOS 13 / iOS 16 / tvOS 16 / watchOS 9), no limit on older Apple systems.
func suiteTimeLimit(minutes: UInt64 = 1) -> any SuiteTrait {
    if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
        return TimeLimitTrait.timeLimit(.minutes(minutes))
    }
    return ConditionTrait.enabled(if: true)
}
