/// A small, fast random number generator from a seed (SplitMix64): the same seed gives the same
/// numbers on every platform and run, so a randomized test that fails can be replayed from the
/// seed it prints.
///
/// ```swift
/// var random = SeededGenerator(seed: 42)
/// let operation = random.next(below: 10)          // 0..<10
/// let listeners = (0..<100).shuffled(using: &random)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose numbers follow from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (`bound` > 0), by remainder: the same on every platform, unlike
    /// the standard library's `next(upperBound:)`, whose algorithm may change.
    public mutating func next(below bound: UInt64) -> UInt64 {
        next() % bound
    }
}
