import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The pure policies, table-driven.
@Suite(Hang.timeLimit(minutes: 2)) struct PolicyTests {
    static let t0 = Date(timeIntervalSince1970: 1_000)

    @Test(arguments: [
        // (first request, last request) in seconds after t0 → fires at
        (0.0, 0.0, 5.0),
        (0.0, 3.0, 8.0),
        (0.0, 24.9, 29.9),
        (0.0, 25.0, 30.0),
        (0.0, 29.0, 30.0),  // max wait caps the trailing debounce
        (10.0, 50.0, 40.0),
    ])
    func t5_debounceFiresFiveSecondsAfterTheLastRequestButAtMost30AfterTheFirst(
        first: Double, last: Double, expected: Double
    ) {
        let policy = DebouncePolicy()
        #expect(policy.fireTime(firstRequest: first, lastRequest: last) == expected)
    }

    @Test func t5_maxWaitIsNeverShorterThanTheDelay() {
        #expect(DebouncePolicy(delay: 10, maxWait: 3).maxWait == 10)
    }

    static let customer = CustomerIds(cookie: "c")

    @Test(arguments: [
        // (age in seconds, same customer) → answers
        (0.0, true, true),
        (4.999, true, true),
        (5.0, true, false),
        (60.0, true, false),
        (-1.0, true, false),  // from the future: the clock went back
        (1.0, false, false),
    ])
    func g1_freshnessNeedsTheSameCustomerAndAnAgeUnderFiveSeconds(age: Double, sameCustomer: Bool, answers: Bool) {
        let snapshot = SegmentSnapshot(
            customer: sameCustomer ? Self.customer : CustomerIds(["cookie": "c", "registered": "x"]),
            segments: [:], fetchedAt: Self.t0)
        #expect(CacheFreshness().canAnswer(from: snapshot, for: Self.customer, at: Self.t0 + age) == answers)
    }

    @Test func g1_noSnapshotNeverAnswers() {
        #expect(!CacheFreshness().canAnswer(from: nil, for: Self.customer, at: Self.t0))
    }

    static let a = Segment(id: "a", segmentationId: "g")
    static let b = Segment(id: "b", segmentationId: "g")
    static let aRenamed = Segment(id: "a", segmentationId: "g", attributes: ["name": "x"])
    static let discovery = SegmentCategory.discovery()
    static let content = SegmentCategory.content()

    struct DiffCase: Sendable, CustomTestStringConvertible {
        let name: String
        let old: SegmentsByCategory?
        let oldCustomer: CustomerIds
        let new: SegmentsByCategory
        let changed: SegmentsByCategory
        var testDescription: String { name }
    }

    static let diffCases: [DiffCase] = [
        DiffCase(name: "D2 reorder", old: [discovery: [a, b]], oldCustomer: customer, new: [discovery: [b, a]], changed: [:]),
        DiffCase(name: "D2 add", old: [discovery: [a]], oldCustomer: customer, new: [discovery: [a, b]], changed: [discovery: [a, b]]),
        DiffCase(name: "D2 remove", old: [discovery: [a, b]], oldCustomer: customer, new: [discovery: [b]], changed: [discovery: [b]]),
        DiffCase(name: "D2 alter", old: [discovery: [a]], oldCustomer: customer, new: [discovery: [aRenamed]], changed: [discovery: [aRenamed]]),
        DiffCase(name: "D2 duplicates", old: [discovery: [a]], oldCustomer: customer, new: [discovery: [a, a]], changed: [:]),
        DiffCase(name: "D3 no baseline", old: nil, oldCustomer: customer, new: [discovery: [a], content: []], changed: [discovery: [a], content: []]),
        DiffCase(name: "D3 other ids", old: [discovery: [a]], oldCustomer: CustomerIds(cookie: "other"), new: [discovery: [a]], changed: [discovery: [a]]),
        DiffCase(name: "D4 vanished", old: [discovery: [a], content: [b]], oldCustomer: customer, new: [content: [b]], changed: [discovery: []]),
        DiffCase(name: "D4 emptied", old: [discovery: [a]], oldCustomer: customer, new: [discovery: []], changed: [discovery: []]),
        DiffCase(name: "D4 other ids vanished", old: [content: [b]], oldCustomer: CustomerIds(cookie: "other"), new: [:], changed: [content: []]),
        DiffCase(name: "D4 empty to absent", old: [content: []], oldCustomer: customer, new: [:], changed: [:]),
        DiffCase(name: "unknown category kept", old: [:], oldCustomer: customer, new: [SegmentCategory("x"): [a]], changed: [SegmentCategory("x"): [a]]),
    ]

    @Test(arguments: diffCases)
    func d2_d3_d4_perCategoryUnorderedDiff(_ diffCase: DiffCase) {
        let baseline = diffCase.old.map {
            SegmentSnapshot(customer: diffCase.oldCustomer, segments: $0, fetchedAt: Self.t0)
        }
        #expect(SegmentDiff.changes(from: baseline, to: diffCase.new, for: Self.customer) == diffCase.changed)
    }

    @Test(arguments: [
        // (attempt, random, Retry-After) → delay
        (1, 0.5, nil, 2.0),
        (2, 0.5, nil, 4.0),
        (5, 0.5, nil, 32.0),
        (6, 0.5, nil, 60.0),
        (100, 0.5, nil, 60.0),
        (1, 0.0, nil, 1.6),  // −20 %
        (1, 1.0, nil, 2.4),  // +20 %
        (6, 1.0, nil, 60.0),  // jitter never exceeds the cap
        (1, 0.5, 30.0, 30.0),  // Retry-After wins when longer
        (4, 0.5, 1.0, 16.0),
        (0, 0.5, nil, 2.0),
    ] as [(Int, Double, Double?, Double)])
    func t7_backoffDoublesWithJitterUpToTheCapAndHonoursRetryAfter(
        attempt: Int, random: Double, retryAfter: Double?, expected: Double
    ) {
        let delay = RetryBackoff().delay(attempt: attempt, random: random, retryAfter: retryAfter)
        #expect(abs(delay - expected) < 1e-9)
    }
}
