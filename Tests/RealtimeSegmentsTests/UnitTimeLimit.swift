import Testing

/// The time limit of every unit-test suite here: one minute (the `.timeLimit` trait; unit tests run
/// on virtual time, so a suite that hits it is stuck, not slow). The trait exists from macOS 13,
/// iOS 16, tvOS 16 and watchOS 9; `@Suite` accepts no `@available`, so older deployment targets get
/// a trait that changes nothing.
let unitTimeLimit: any SuiteTrait = {
    if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
        return TimeLimitTrait.timeLimit(.minutes(1))
    }
    return ConditionTrait.enabled(if: true)
}()
